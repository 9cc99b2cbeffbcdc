// attnprof compare: verdicts for a stored run against a baseline (a committed file, or the
// stored history with --baseline history), or a stored A/B judged again (--pair); the CI gate.
// Applies accept/ignore annotations (and Perf-Accept commit trailers), checks the run's validity
// and that the baseline is comparable, prints the report and publishes it (markdown, JSON,
// JUnit, HTML, the job summary and workflow annotations under GitHub Actions), records the
// verdicts in the database when it is writable; exit 1 on a regression.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/cli/verdict_output.h"
#include "harness/gate/judge.h"
#include "harness/report/verdicts.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

struct CompareArgs {
  std::string db, run = "latest", baseline, tolerance, pair;
  gate::HistoryOptions history;
  bool accept_from_commit = false, no_record = false, require_baseline = false;
  gate::Options opts;  // --strict and the findings' rules; --tolerance is parsed into it
  ReportFiles files;
};

// How a run is judged: the gate's options the arguments give, and whether the verdicts are
// recorded (unless --no-record, when the database is writable).
struct CompareSetup {
  gate::Options opts;
  bool record = false;
};

// util::InputError when there is no database at a.db.
CompareSetup compare_setup(const CompareArgs& a) {
  CompareSetup s{a.opts};
  if (!a.tolerance.empty()) s.opts.tolerance = parse_tolerance(a.tolerance);
  std::error_code ec;  // a symlink loop is the open path's to report, not an exception here
  if (!std::filesystem::exists(a.db, ec) && !std::filesystem::is_symlink(a.db, ec))
    throw util::InputError(util::Diagnostic{
        "--db", 0, 0, fmt::format("no database at {}; run `attnprof run` first", a.db)});
  // Writable: the file, and the folder too for WAL (-wal and -shm files next to the database).
  const std::string dir = std::filesystem::absolute(a.db).parent_path().string();
  s.record = !a.no_record && access(a.db.c_str(), W_OK) == 0 && access(dir.c_str(), W_OK) == 0;
  return s;
}

// The baseline's warning as a GitHub annotation: the report above printed it already, once.
void annotate_baseline(const gate::RunJudgement& j) {
  if (j.check.warning.empty() || !std::getenv("GITHUB_ACTIONS")) return;
  fmt::print("::{} title=attnprof baseline::{}\n", j.baseline_fails ? "error" : "warning",
             j.check.warning);
}

int compare(const CompareArgs& a) {
  const CompareSetup s = compare_setup(a);
  store::Database db = open_history(
      a.db, s.record ? store::Database::Mode::read_write : store::Database::Mode::read_only);
  if (!a.pair.empty()) {  // a stored A/B judged again
    PairJudgement j;
    j.options = s.opts;
    j.files = a.files;
    j.accept_from_commit = a.accept_from_commit;
    j.record = s.record;
    return judge_pair(db, a.pair, j);
  }
  if (a.baseline.empty())
    throw util::InputError(util::Diagnostic{
        "--baseline", 0, 0, "give --baseline FILE or --baseline history, or --pair for an A/B"});
  const auto run = db.load_run(a.run);  // nullopt: no such run
  if (!run)
    throw util::InputError(
        util::Diagnostic{"--run", 0, 0, fmt::format("no run \"{}\" in {}", a.run, a.db)});
  const gate::NamedBaseline b = gate::named_baseline(db, *run, a.baseline, a.history);
  const gate::RunJudgement j = gate::judge_run(
      b.baseline, *run, s.opts, a.require_baseline, [&](std::vector<gate::CaseVerdict>& v) {
        apply_notes(v, *run, db, a.accept_from_commit, s.record);
      });
  report::GateReport rep;
  rep.verdicts = j.verdicts;
  rep.run = *run;
  rep.baseline = b.text;
  rep.notes = j.notes;
  rep.validity = j.validity;
  rep.strict = s.opts.strict;
  rep.exit_code = j.exit_code;  // 1 too when j.baseline_fails
  publish_report(rep, a.files);
  annotate_baseline(j);
  if (s.record)
    record_verdicts(db, run->id, j.verdicts, b.label);
  else if (!a.no_record)
    fmt::print("note: {} is not writable; verdicts not recorded\n", a.db);
  if (j.baseline_fails)
    fmt::print(stderr, "attnprof: --require-baseline: failing the gate (no comparable baseline)\n");
  else if (rep.exit_code == util::exit_environment)
    fmt::print(stderr,
               "attnprof: {} regression(s) left unjudged in an environmental run: measure again "
               "on a quiet machine, or judge them anyway with --strict\n",
               j.unjudged);
  return rep.exit_code;
}

}  // namespace

Action setup_compare(CLI::App& sub) {
  auto a = std::make_shared<CompareArgs>();
  add_db_option(sub, a->db);
  sub.add_option("--run", a->run, "Run to judge: latest, an id or a unique id prefix")
      ->capture_default_str();
  sub.add_option("--baseline", a->baseline,
                 "Baseline file (baselines/<hardware>.yaml), or `history`: earlier runs of the "
                 "baseline branch in the same environment");
  sub.add_option("--pair", a->pair,
                 "Judge a stored A/B again (attnprof ab's pair id, a prefix, or latest) instead "
                 "of a run against a baseline");
  sub.add_option("--baseline-branch", a->history.branch,
                 "With --baseline history: the branch whose runs are the baseline")
      ->capture_default_str();
  sub.add_option("--window", a->history.window,
                 "With --baseline history: the newest N runs of each case")
      ->capture_default_str();
  sub.add_option("--min-runs", a->history.min_runs,
                 "With --baseline history: fewer runs than this and the case is `new`")
      ->capture_default_str();
  sub.add_flag("--include-unstable", a->history.include_unstable,
               "With --baseline history: keep earlier runs whose case a busy machine made "
               "unstable (left out by default)");
  sub.add_option("--tolerance", a->tolerance,
                 "Tolerance for every case, e.g. 5% (default: each case's own, else 5%)");
  sub.add_flag("--strict", a->opts.strict,
               "Fail on inconclusive comparisons too, and judge environmental runs anyway");
  sub.add_flag("--accept-from-commit-message", a->accept_from_commit,
               "Accept regressions named by `Perf-Accept: <glob> <reason>` trailers of the "
               "commit(s) under test (git log)");
  sub.add_flag("--require-baseline", a->require_baseline,
               "Fail the gate (exit 1) when there is no comparable baseline: one from another "
               "environment, or none of the run's cases in it (or in history)");
  sub.add_flag("--no-record", a->no_record, "Do not store the verdicts in the database");
  add_finding_options(sub, a->opts.findings);
  add_report_options(sub, a->files);
  return [a] { return compare(*a); };
}

}  // namespace attnprof::cli
