// attnprof compare: verdicts for a stored run against a baseline (a committed file, or the
// stored history with --baseline history), or a stored A/B judged again (--pair); the CI gate.
// Applies accept/ignore annotations (and Perf-Accept commit trailers), checks the run's validity
// and that the baseline is comparable, prints the report and publishes it (markdown, JSON,
// JUnit, HTML, the job summary and workflow annotations under GitHub Actions), records the
// verdicts in the database when it is writable; exit 1 on a regression.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "harness/cli/commands.h"
#include "harness/cli/verdict_output.h"
#include "harness/gate/baseline.h"
#include "harness/gate/compare.h"
#include "harness/gate/history_baseline.h"
#include "harness/gate/validity.h"
#include "harness/report/verdicts.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

struct CompareArgs {
  std::string db, run = "latest", baseline, tolerance, pair;
  gate::HistoryOptions history;
  bool strict = false, accept_from_commit = false, no_record = false, require_baseline = false;
  ReportFiles files;
};

bool writable(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::absolute(path).parent_path();
  // WAL needs the folder too (-wal and -shm files next to the database).
  return access(path.c_str(), W_OK) == 0 && access(dir.c_str(), W_OK) == 0;
}

// How a run is judged: the command's arguments, the gate's options they give, and whether the
// verdicts are recorded (unless --no-record, when the database is writable).
struct CompareSetup {
  const CompareArgs& args;
  gate::Options opts;
  bool record = false;
};

// util::InputError when there is no database at a.db.
CompareSetup compare_setup(const CompareArgs& a) {
  CompareSetup s{a, {}, false};
  if (!a.tolerance.empty()) s.opts.tolerance = parse_tolerance(a.tolerance);
  s.opts.strict = a.strict;
  std::error_code ec;  // a symlink loop is the open path's to report, not an exception here
  if (!std::filesystem::exists(a.db, ec) && !std::filesystem::is_symlink(a.db, ec))
    throw util::InputError(util::Diagnostic{
        "--db", 0, 0, fmt::format("no database at {}; run `attnprof run` first", a.db)});
  s.record = !a.no_record && writable(a.db);
  return s;
}

// --pair: a stored A/B judged again.
int judge_pair_again(store::Database& db, const CompareSetup& s) {
  PairJudgement j;
  j.options = s.opts;
  j.files = s.args.files;
  j.accept_from_commit = s.args.accept_from_commit;
  j.record = s.record;
  return judge_pair(db, s.args.pair, j);
}

core::Run judged_run(store::Database& db, const CompareArgs& a) {
  std::optional<core::Run> run = db.load_run(a.run);
  if (!run)
    throw util::InputError(
        util::Diagnostic{"--run", 0, 0, fmt::format("no run \"{}\" in {}", a.run, a.db)});
  return std::move(*run);
}

// A run's verdicts against its baseline, with what the report says about them.
struct Judgement {
  std::string baseline_label, baseline_text;  // as recorded; as the report names it
  std::vector<gate::CaseVerdict> verdicts;
  gate::BaselineCheck check;
  gate::RunValidity validity;
  int unjudged = 0;             // regressions of an environmental run left unjudged
  bool baseline_fails = false;  // no comparable baseline, and --require-baseline
};

Judgement judge(store::Database& db, const core::Run& run, const CompareSetup& s) {
  const CompareArgs& a = s.args;
  const bool from_history = a.baseline == "history";
  const gate::Baseline baseline =
      from_history ? gate::history_baseline(db, run, a.history) : gate::load_baseline(a.baseline);
  Judgement j;
  j.baseline_label = from_history ? "history:" + a.history.branch : a.baseline;
  j.baseline_text = from_history ? baseline.path : a.baseline;
  j.verdicts = gate::compare(baseline, run, s.opts);
  j.check = gate::check_baseline(baseline, run, j.verdicts, s.opts);
  apply_notes(j.verdicts, run, db, a.accept_from_commit, s.record);

  j.validity = gate::assess_run(j.verdicts);
  // An environmental run's regressions are not judged, but neither does the run pass: a change
  // that slows a shared path moves many cases together too. Exit 3 says "measure again".
  if (!s.opts.strict && j.validity.environmental) {
    j.unjudged =
        static_cast<int>(std::count_if(j.verdicts.begin(), j.verdicts.end(), [](const auto& v) {
          return v.verdict == gate::Verdict::regression;
        }));
    gate::mark_environmental(j.verdicts, j.validity);
  }
  j.baseline_fails = !j.check.comparable && a.require_baseline;
  return j;
}

report::GateReport gate_report(const core::Run& run, const Judgement& j, const CompareSetup& s) {
  const int code = gate::exit_code(j.verdicts, s.opts);
  report::GateReport rep;
  rep.verdicts = j.verdicts;
  rep.run = run;
  rep.baseline = j.baseline_text;
  // Said loudly, in every report: a gate with nothing to compare would otherwise pass quietly.
  if (!j.check.warning.empty())
    rep.notes.push_back(fmt::format(
        "{}: {}", j.baseline_fails ? "no comparable baseline" : "warning", j.check.warning));
  if (j.validity.environmental)
    rep.notes.push_back(fmt::format(
        "environmental run: {}; {}", j.validity.reason,
        s.opts.strict ? "judged anyway (--strict)"
                      : "its regressions and improvements are inconclusive; measure again"));
  rep.validity = j.validity;
  rep.strict = s.opts.strict;
  rep.exit_code = j.baseline_fails                            ? util::exit_gate_failed
                  : code == util::exit_pass && j.unjudged > 0 ? util::exit_environment
                                                              : code;
  return rep;
}

void warn_baseline(const Judgement& j) {
  if (j.check.warning.empty()) return;
  if (std::getenv("GITHUB_ACTIONS"))
    fmt::print("::{} title=attnprof baseline::{}\n", j.baseline_fails ? "error" : "warning",
               j.check.warning);
  fmt::print(stderr, "attnprof: {}: {}\n", j.baseline_fails ? "error" : "warning", j.check.warning);
}

int compare(const CompareArgs& a) {
  const CompareSetup s = compare_setup(a);
  store::Database db = store::Database::open(
      a.db, s.record ? store::Database::Mode::read_write : store::Database::Mode::read_only);
  if (!a.pair.empty()) return judge_pair_again(db, s);
  if (a.baseline.empty())
    throw util::InputError(util::Diagnostic{
        "--baseline", 0, 0, "give --baseline FILE or --baseline history, or --pair for an A/B"});
  const core::Run run = judged_run(db, a);

  const Judgement j = judge(db, run, s);
  const report::GateReport rep = gate_report(run, j, s);
  publish_report(rep, a.files);
  warn_baseline(j);
  if (s.record)
    record_verdicts(db, run.id, j.verdicts, j.baseline_label);
  else if (!a.no_record)
    fmt::print("note: {} is not writable; verdicts not recorded\n", a.db);
  if (j.baseline_fails) {
    fmt::print(stderr, "attnprof: --require-baseline: failing the gate (no comparable baseline)\n");
    return util::exit_gate_failed;
  }
  if (rep.exit_code == util::exit_environment)
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
  sub.add_option("--tolerance", a->tolerance,
                 "Tolerance for every case, e.g. 5% (default: each case's own, else 5%)");
  sub.add_flag("--strict", a->strict,
               "Fail on inconclusive comparisons too, and judge environmental runs anyway");
  sub.add_flag("--accept-from-commit-message", a->accept_from_commit,
               "Accept regressions named by `Perf-Accept: <glob> <reason>` trailers of the "
               "commit(s) under test (git log)");
  sub.add_flag("--require-baseline", a->require_baseline,
               "Fail the gate (exit 1) when there is no comparable baseline: one from another "
               "environment, or none of the run's cases in it (or in history)");
  sub.add_flag("--no-record", a->no_record, "Do not store the verdicts in the database");
  add_report_options(sub, a->files);
  return [a] { return compare(*a); };
}

}  // namespace attnprof::cli
