// How one sample of a case is timed. CPU: wall clock around the call (steady_clock), with the
// intra-op thread count fixed. CUDA: a cold sample in the nvbench manner: the L2 is flushed by
// a memset over twice its size, then CUDA events bracket the call on the current stream; the
// SM clock is read through NVML (when the driver provides it) for throttle detection.
#pragma once

#include <functional>
#include <memory>

#include "harness/core/types.h"
#include "harness/measure/engine.h"

namespace attnprof::runner {

std::unique_ptr<measure::Timer> make_timer(const core::Case& c, std::function<void()> call);

}  // namespace attnprof::runner
