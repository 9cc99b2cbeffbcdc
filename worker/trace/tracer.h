// record(): one traced pass of a body, the input of the cost matrix. ATen ops come
// from RecordFunction callbacks (name, nesting, CPU self and total time), device work from
// CUPTI where a GPU is present, each kernel mapped to the op that launched it through an
// external correlation id. Input shapes and dtypes (boxed inputs) and memory (an allocator
// reporter: bytes allocated and freed per op, peak) come from one more call of the body after
// the timed ones, so the timed calls do not carry their cost. This header includes no LibTorch
// or CUDA header.
//
// Never enables the LibTorch (Kineto) profiler: CUPTI activity tracing has one client per
// process on CUDA 13.0 drivers. It also shares the thread-local PROFILER_STATE slot with
// Kineto's memory reporting, so do not call record() inside torch.profiler.
#pragma once

#include <functional>
#include <string>

#include "harness/trace/model.h"

namespace attnprof::trace {

struct Options {
  bool device = false;  // CUPTI activity tracing; only where a GPU is present, else a note says why
  bool memory = true;   // allocator reports: bytes per op, peak (in the description call)
  bool hardware_counters = false;  // DRAM bytes and GPU time via the range profiler, in a
                                   // separate pass of the body (GPU only)
  // Calls of the body recorded back to back in one session (Trace::calls); the caller warms it
  // up first, so the figures are those of warm calls, as torch.profiler's schedule gives them.
  int calls = 1;
  // Calls traced first and then dropped, torch.profiler's schedule's warmup: the first calls
  // after the callbacks are installed run slower than the rest (the tracer's and LibTorch's
  // callback paths are cold; bench/bench_torch_trace), and the matrix should not show it. Their
  // ops are not in the Trace, nor are the device records of kernels they launched.
  int warmup_calls = 1;
  // Input shapes and dtypes per op (torch.profiler's record_shapes).
  bool shapes = true;
  // Shapes and memory are recorded in one more call of the body after the timed calls, the
  // description call, which the timed calls then run without (boxing every op's inputs and the
  // allocator's reports cost as much as the rest of the tracer). Each timed op takes what its
  // counterpart there recorded: the op at the same place in the call's op tree (the k-th of its
  // name under its parent's counterpart, or at the top of its thread). Where the calls ran
  // different ops, the ops without a counterpart have none, and a note says how many. With
  // shapes and memory both off there is no description call.
};

// Runs body options.warmup_calls + options.calls times under the tracer(s), then once more for
// shapes and memory, and returns what was recorded in the options.calls timed calls. Not
// reentrant: one record() at a time per process. Exceptions from body propagate after the
// tracers are removed.
Trace record(const std::function<void()>& body, const Options& options);

class DeviceTracer;  // cupti_tracer.h
// The same, with the device side given (tests pass a fake that feeds CUPTI records); device may be
// null for a CPU-only pass. options.device is ignored.
Trace record(const std::function<void()>& body, const Options& options, DeviceTracer* device);

// True where device tracing can run (a CUDA device is present and attnprof was built with
// CUPTI); otherwise false and *why_not says why. Calls no CUPTI function.
bool device_tracing_available(std::string* why_not);

}  // namespace attnprof::trace
