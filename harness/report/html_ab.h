// What the A/B page draws for one case (html_gate): its rounds, marked by the pair of workers
// that measured each, and each pair's estimate against the pooled interval the verdict gives,
// so that the two levels of the paired statistic (rounds within a pair, pairs within the case;
// docs/statistics.md) can be seen; and the memory figures of both sides, unless all are zero.
#pragma once

#include <string>
#include <vector>

#include "harness/gate/compare.h"
#include "harness/report/verdicts.h"

namespace attnprof::report::html {

// Head/base ratio per round of the times the gate judged, the rounds grouped by pair of workers
// (each pair's span shaded in turn and labelled), the tolerance band around 1.
std::string ab_rounds_svg(const AbCase& ab, double tolerance);
// Each pair's own estimate (a point, ±2 standard errors) beside the verdict's pooled estimate
// and interval (a line in a band); "" when no pair has enough rounds for an estimate.
std::string ab_pairs_svg(const AbCase& ab, const gate::CaseVerdict& verdict);
// The figures both sides recorded, base beside head; "" when there are none, or every one of
// them is zero on both sides (a table of zeros says nothing).
std::string ab_memory_table(const std::vector<MemoryDiff>& memory);

}  // namespace attnprof::report::html
