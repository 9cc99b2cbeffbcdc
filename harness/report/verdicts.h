// The gate's verdicts for people and for CI: a console table, a markdown job summary (GitHub's
// $GITHUB_STEP_SUMMARY), workflow annotations, and JSON.
#pragma once

#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/gate/compare.h"

namespace attnprof::report {

std::string verdict_table(const std::vector<gate::CaseVerdict>& v);
// "gate: 1 regression, 0 failed, 0 missing, 3 unchanged, 1 inconclusive, 0 improvement, 0 new"
std::string verdict_counts(const std::vector<gate::CaseVerdict>& v);
// Regressions and failures first, unchanged cases collapsed into a <details> block, and the
// whole text kept under GitHub's 1 MiB summary limit. Notes (e.g. "environmental run: ...")
// are quoted under the counts.
std::string verdict_markdown(const std::vector<gate::CaseVerdict>& v, const core::Run& run,
                             const std::string& baseline_path,
                             const std::vector<std::string>& notes = {});
// "::error title=...::message" lines for regressions, failures and missing cases, "::warning"
// for inconclusive ones.
std::string verdict_annotations(const std::vector<gate::CaseVerdict>& v);
std::string verdict_json(const std::vector<gate::CaseVerdict>& v, const core::Run& run);

}  // namespace attnprof::report
