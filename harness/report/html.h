// The HTML report: one self-contained file (inline CSS and SVG charts drawn here, no script, no
// network), which opens from a CI artifact. Three views:
//   html_gate     a gate's verdicts (compare or ab): the outcome, cases worst first, and per
//                 case the cost matrix, the roofline point and, for an A/B, its rounds and
//                 the per-op diff (GateReport::ab);
//   html_run      a stored run: its results, a roofline of every kernel-level case against
//                 the device's peaks, and each case's cost matrix;
//   html_history  the history of each case a glob matches: its medians with their intervals
//                 over runs (the x axis dated and each run's commit under its date), the change
//                 points with their commit ranges, and the annotations (accept, reset, ignore).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/report/verdicts.h"
#include "harness/store/case_history.h"

namespace attnprof::report {

std::string html_gate(const GateReport& report);
std::string html_run(const core::Run& run);

// The history of each case store::case_histories found for `glob`, one chart each.
std::string html_history(const std::vector<store::CaseHistory>& cases, const std::string& glob);

// The device peaks a case was judged against: the scenario's hardware.peak_*, else from its
// roofline metrics (achieved / fraction of peak, which the worker took from the GPU's
// properties or, on a CPU, its measured probe); 0 where unknown. `source` says which.
struct Peaks {
  double tflops = 0, gbps = 0;
  std::string source;
};
Peaks case_peaks(const core::CaseResult& c);

}  // namespace attnprof::report
