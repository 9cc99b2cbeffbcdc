// How one sample of a case is timed.
//
// CPU: wall clock around the call (steady_clock), with the intra-op thread count fixed.
//
// CUDA: measure::DeviceTimer (harness/measure/device_timer.h: cold calls after an L2 flush or
// CUDA-graph batches, behind the blocking kernel, CUPTI durations with CUDA events as the
// cross-check and fallback, the SM clock per sample) over the CUDA parts of cuda_parts.h.
#pragma once

#include <functional>
#include <memory>

#include "harness/core/types.h"
#include "harness/measure/device_timer.h"
#include "harness/measure/timer.h"

namespace attnprof::runner {

using measure::CaseTimer;
using TimerOptions = measure::DeviceTimerOptions;

std::unique_ptr<CaseTimer> make_timer(const core::Case& c, std::function<void()> call);
std::unique_ptr<CaseTimer> make_timer(const core::Case& c, std::function<void()> call,
                                      const TimerOptions& options);

// `--require-idle-gpu` before a case's setup: throws measure::GpuSharedError when another
// process shares the case's GPU (ran something in the last second); nothing on the CPU, or where
// NVML cannot say. The timer checks again before the samples.
void refuse_shared_gpu(const core::Case& c);

}  // namespace attnprof::runner
