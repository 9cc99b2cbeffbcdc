// How a GPU's clocks were set while a case ran, as one short string that history comparisons
// check, as they check the timing mode (timing_mode.h): applications clocks set below or above
// their default (`nvidia-smi -ac`) run every kernel at another speed, and persistence mode
// changes what the first calls after a pause cost. A run under another policy than its history
// is not a regression of the code; its earlier runs under the other policy are left out, with a
// note that says so.
//
//   "default clocks, persistence on"           applications clock at its default
//   "applications clock 1,410 of 1,980 MHz, persistence off"
//   "default clocks, SM clock held by a user setting (nvidia-smi -lgc), persistence on"
//                                              the driver named a clock setting as the only
//                                              reason the clock was lower (core/stability.h)
//
// Derived from the metrics the worker stores with a GPU case (core/metric_names.h), so it needs
// no NVML and works on runs loaded from the database. Empty when unknown (a CPU case, no NVML, a
// run stored before they were recorded): an unknown policy matches any.
#pragma once

#include <map>
#include <string>

namespace attnprof::gate {

std::string clock_policy(const std::map<std::string, double>& metrics);

}  // namespace attnprof::gate
