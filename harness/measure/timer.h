// What the measurement engine times, and how: one call per sample() (wall clock around a CPU
// call; CUDA events or CUPTI records on a GPU). The engine decides how many samples to take.
#pragma once

#include "harness/core/types.h"

namespace attnprof::measure {

class Timer {
 public:
  virtual ~Timer() = default;
  // One timed call. Per-sample preparation that must not be counted (an L2 flush, re-creating
  // inputs) happens inside, outside the timed region. Sets ns, and where it can, at_ns (epoch
  // ns; the engine stamps samples that come back without one) and sm_clock_mhz (the clock the
  // call actually ran at, for throttle detection).
  virtual core::Sample sample() = 0;
};

}  // namespace attnprof::measure
