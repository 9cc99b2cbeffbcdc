// A run judged against its baseline: what `attnprof compare` decides, apart from its command
// line and its printing. The verdicts (compare.h), whether the baseline was comparable,
// annotations (applied by the caller, who may record them), whether the run is environmental
// (validity.h) and what that leaves unjudged, the exit code, and the notes every report shows.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/gate/compare.h"
#include "harness/gate/history_baseline.h"
#include "harness/gate/validity.h"

namespace attnprof::gate {

struct RunJudgement {
  std::vector<CaseVerdict> verdicts;
  BaselineCheck check;
  RunValidity validity;
  int unjudged = 0;                // regressions of an environmental run left unjudged
  bool baseline_fails = false;     // no comparable baseline, and require_baseline
  std::vector<std::string> notes;  // for the report, above its table
  // 1 when baseline_fails; 3 (measure again) when the verdicts pass but an environmental run
  // left regressions unjudged; else exit_code(verdicts).
  int exit_code = 0;
};

// The baseline `spec` names: "history" (earlier runs of history.branch in the run's environment)
// or a baseline file; with how the stored verdicts ("history:main", the file) and the report
// (the file, or what the history baseline says it is) name it.
struct NamedBaseline {
  Baseline baseline;
  std::string label, text;
};
NamedBaseline named_baseline(store::Database& db, const core::Run& run, const std::string& spec,
                             const HistoryOptions& history);

// `annotate` applies annotations to the verdicts, after the baseline check and before the
// validity, which counts what they leave.
RunJudgement judge_run(const Baseline& baseline, const core::Run& run, const Options& options,
                       bool require_baseline,
                       const std::function<void(std::vector<CaseVerdict>&)>& annotate);

}  // namespace attnprof::gate
