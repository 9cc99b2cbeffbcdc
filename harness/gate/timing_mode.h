// How a case's samples were timed, as one short string that baseline files record and every
// comparison checks. Samples timed differently measure different things (a CUDA-graph batch is
// warm, a single cold call pays the L2 refill; CUPTI's kernel time leaves out the gaps CUDA
// events include), so a case whose mode changed between baseline and run is reported as
// "timed differently", never as a regression or an improvement.
//
//   "cpu.wall"           CPU: wall clock around the call (worker/runner/timers.cpp)
//   "cuda.<calls>.<time>"  GPU (harness/measure/device_timer.h):
//       <calls>  "cold"    single calls, L2 flushed        (metric measure.graph_batch == 0)
//                "graph"   CUDA-graph batches, warm        (measure.graph_batch > 0)
//       <time>   "cupti"   every sample CUPTI kernel time  (measure.cupti_fraction == 1)
//                "events"  every sample CUDA event time    (measure.cupti_fraction == 0)
//                "mixed"   some of each                    (in between)
// Derived from the metrics the runner stores with each case, so it needs no LibTorch and works
// on runs loaded from the database. The batch size K is left out on purpose: the timer picks it
// from the probe's median, so a small slowdown can change K without changing what is measured.
#pragma once

#include <map>
#include <string>

#include "harness/core/types.h"

namespace attnprof::gate {

// Empty when unknown: a GPU case without the timer's metrics (not measured, or stored by an
// attnprof that did not record them). An unknown mode matches any mode.
std::string timing_mode(const core::CaseResult& result);
// The same from a case's device ("cpu", "cuda:1") and its stored metrics: for history rows.
std::string timing_mode(const std::string& device, const std::map<std::string, double>& metrics);

// "cuda.graph.cupti" -> "CUDA-graph batches, CUPTI kernel time", for reasons a person reads.
std::string describe_timing_mode(const std::string& mode);

}  // namespace attnprof::gate
