// A run judged against its baseline (judge.h): verdicts, baseline check, validity, exit code.
#include "harness/gate/judge.h"

#include <fmt/format.h>

#include <algorithm>

#include "harness/gate/baseline.h"
#include "harness/util/error.h"

namespace attnprof::gate {
namespace {

// Said loudly, in every report: a gate with nothing to compare would otherwise pass quietly.
std::vector<std::string> notes_of(const RunJudgement& j, const Options& options) {
  std::vector<std::string> notes;
  if (!j.check.warning.empty())
    notes.push_back(fmt::format("{}: {}", j.baseline_fails ? "no comparable baseline" : "warning",
                                j.check.warning));
  if (j.validity.environmental)
    notes.push_back(fmt::format(
        "environmental run: {}; {}", j.validity.reason,
        options.strict ? "judged anyway (--strict)"
                       : "its regressions and improvements are inconclusive; measure again"));
  return notes;
}

}  // namespace

NamedBaseline named_baseline(store::Database& db, const core::Run& run, const std::string& spec,
                             const HistoryOptions& history) {
  if (spec != "history") return {load_baseline(spec), spec, spec};
  NamedBaseline b{history_baseline(db, run, history), "history:" + history.branch, ""};
  b.text = b.baseline.path;
  return b;
}

RunJudgement judge_run(const Baseline& baseline, const core::Run& run, const Options& options,
                       bool require_baseline,
                       const std::function<void(std::vector<CaseVerdict>&)>& annotate) {
  RunJudgement j;
  j.verdicts = compare(baseline, run, options);
  j.check = check_baseline(baseline, run, j.verdicts, options);
  if (annotate) annotate(j.verdicts);

  j.validity = assess_run(j.verdicts);
  // An environmental run's regressions are not judged, but neither does the run pass: a change
  // that slows a shared path moves many cases together too. Exit 3 says "measure again".
  if (!options.strict && j.validity.environmental) {
    j.unjudged =
        static_cast<int>(std::count_if(j.verdicts.begin(), j.verdicts.end(), [](const auto& v) {
          return v.verdict == Verdict::regression;
        }));
    mark_environmental(j.verdicts, j.validity);
  }
  j.baseline_fails = !j.check.comparable && require_baseline;
  j.notes = notes_of(j, options);
  const int code = exit_code(j.verdicts, options);
  j.exit_code = j.baseline_fails                            ? util::exit_gate_failed
                : code == util::exit_pass && j.unjudged > 0 ? util::exit_environment
                                                            : code;
  return j;
}

}  // namespace attnprof::gate
