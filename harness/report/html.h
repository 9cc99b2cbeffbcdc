// The HTML report: one self-contained file (inline CSS and SVG charts drawn here, no script, no
// network), which opens from a CI artifact. Three views:
//   html_gate     a gate's verdicts (compare or ab): the outcome, cases worst first, and per
//                 case the cost matrix, the roofline point and, for an A/B, its rounds and
//                 the per-op diff (GateReport::ab);
//   html_run      a stored run: its results, a roofline of every kernel-level case against
//                 the device's peaks, and each case's cost matrix;
//   html_history  one case's history: its medians with their intervals over runs, the change
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

std::string html_history(const store::CaseHistory& history);  // store::case_history

// The device peaks a case was judged against, from its roofline metrics (achieved / fraction
// of peak); 0 where unknown.
struct Peaks {
  double tflops = 0, gbps = 0;
};
Peaks case_peaks(const core::CaseResult& c);

}  // namespace attnprof::report
