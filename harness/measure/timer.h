// What the measurement engine times, and how: one call per sample() (wall clock around a CPU
// call; CUDA events or CUPTI records on a GPU). The engine decides how many samples to take.
#pragma once

#include <map>
#include <string>
#include <vector>

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

// A Timer that also says how it timed, for the case result: named metrics ("measure.graph_batch",
// "measure.cupti_fraction", ...) and notes (each fallback, with its reason). Read them after
// measure::run.
class CaseTimer : public Timer {
 public:
  virtual std::map<std::string, double> metrics() const { return {}; }
  virtual std::vector<std::string> notes() const { return {}; }
  // Releases what the timer holds across samples (the GPU timer's CUPTI session) before the
  // traced pass, which starts its own. Sampling after finish() starts a new session.
  virtual void finish() {}
};

}  // namespace attnprof::measure
