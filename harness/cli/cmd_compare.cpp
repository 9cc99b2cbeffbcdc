// attnprof compare: verdicts for a stored run against a baseline (a committed file, or the
// stored history with --baseline history); the CI gate. Applies accept/ignore annotations
// (and Perf-Accept commit trailers), checks the run's validity, prints a table, appends a
// markdown summary to $GITHUB_STEP_SUMMARY and emits ::error / ::warning annotations under
// GitHub Actions, records the verdicts in the database when it is writable; exit 1 on a
// regression.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "harness/cli/commands.h"
#include "harness/gate/annotations.h"
#include "harness/gate/baseline.h"
#include "harness/gate/compare.h"
#include "harness/gate/history_baseline.h"
#include "harness/gate/validity.h"
#include "harness/report/publish.h"
#include "harness/report/verdicts.h"
#include "harness/scenario/values.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

struct CompareArgs {
  std::string db, run = "latest", baseline, tolerance, markdown, json, junit, html;
  gate::HistoryOptions history;
  bool strict = false, accept_from_commit = false, no_record = false, wide = false;
};

// "5%" or a fraction like 0.05, through the scenario language's own number parsers.
double parse_tolerance(const std::string& s) {
  std::optional<double> v = scenario::parse_percent(s);
  if (!v) v = scenario::parse_number(s);
  if (v && *v >= 0) return *v;
  throw util::InputError(util::Diagnostic{
      "--tolerance", 0, 0, fmt::format("\"{}\" is not a tolerance like 5% or 0.05", s)});
}

// `git <args>` in the working directory; nullopt when git fails.
std::optional<std::string> git(const std::string& args) {
  FILE* p = popen(("git " + args + " 2>/dev/null").c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  if (pclose(p) != 0) return std::nullopt;
  return out;
}

// The messages the trailers are read from: on a pull_request checkout HEAD is GitHub's merge
// commit, whose own message names no trailer, so every commit the PR brings (HEAD^1..HEAD) is
// read; elsewhere that range is HEAD alone. Needs the history (actions/checkout fetch-depth: 0);
// a shallow clone falls back to HEAD's own message.
std::vector<store::Annotation> commit_trailers(const core::Run& run) {
  std::optional<std::string> message = git("log --format=%B HEAD^1..HEAD");
  if (!message) message = git("log -1 --format=%B");
  if (!message)
    throw util::EnvironmentError(
        "--accept-from-commit-message: `git log` failed here; run it "
        "in the checkout of the commit under test");
  std::string author = git("log -1 --format='%an <%ae>'").value_or("");
  while (!author.empty() && (author.back() == '\n' || author.back() == '\r')) author.pop_back();
  return gate::parse_accept_trailers(*message, run.id, author.empty() ? "commit message" : author);
}

bool writable(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::absolute(path).parent_path();
  // WAL needs the folder too (-wal and -shm files next to the database).
  return access(path.c_str(), W_OK) == 0 && access(dir.c_str(), W_OK) == 0;
}

bool same_annotation(const store::Annotation& a, const store::Annotation& b) {
  return a.kind == b.kind && a.case_glob == b.case_glob && a.run_id == b.run_id &&
         a.reason == b.reason && a.author == b.author;
}

int compare(const CompareArgs& a) {
  gate::Options opts;
  if (!a.tolerance.empty()) opts.tolerance = parse_tolerance(a.tolerance);
  opts.strict = a.strict;

  if (!std::filesystem::exists(a.db))
    throw util::InputError(util::Diagnostic{
        "--db", 0, 0, fmt::format("no database at {}; run `attnprof run` first", a.db)});
  const bool record = !a.no_record && writable(a.db);
  store::Database db = store::Database::open(
      a.db, record ? store::Database::Mode::read_write : store::Database::Mode::read_only);
  std::optional<core::Run> run = db.load_run(a.run);
  if (!run)
    throw util::InputError(
        util::Diagnostic{"--run", 0, 0, fmt::format("no run \"{}\" in {}", a.run, a.db)});

  const bool from_history = a.baseline == "history";
  gate::Baseline baseline =
      from_history ? gate::history_baseline(db, *run, a.history) : gate::load_baseline(a.baseline);
  const std::string baseline_label = from_history ? "history:" + a.history.branch : a.baseline;
  const std::string baseline_text = from_history ? baseline.path : a.baseline;

  std::vector<gate::CaseVerdict> verdicts = gate::compare(baseline, *run, opts);

  std::vector<store::Annotation> notes = db.annotations();
  if (a.accept_from_commit) {
    for (auto& t : commit_trailers(*run)) {
      bool known = false;
      for (const auto& n : notes) known = known || same_annotation(n, t);
      if (known) continue;
      if (record) t.id = db.add_annotation(t);  // audited, and a boundary for history on main
      fmt::print("Perf-Accept: {} in run {} by {}: {}\n", t.case_glob, run->id, t.author, t.reason);
      notes.push_back(std::move(t));
    }
  }
  gate::apply_annotations(verdicts, *run, notes);

  const gate::RunValidity validity = gate::assess_run(verdicts);
  // An environmental run's regressions are not judged, but neither does the run pass: a change
  // that slows a shared path moves many cases together too. Exit 3 says "measure again".
  int unjudged = 0;
  if (!opts.strict && validity.environmental) {
    unjudged = static_cast<int>(std::count_if(verdicts.begin(), verdicts.end(), [](const auto& v) {
      return v.verdict == gate::Verdict::regression;
    }));
    gate::mark_environmental(verdicts, validity);
  }
  const std::string validity_text =
      validity.environmental
          ? fmt::format("{}; {}", validity.reason,
                        opts.strict ? "judged anyway (--strict)"
                                    : "its regressions and improvements are inconclusive; "
                                      "measure again")
          : "";
  const std::string validity_line =
      validity_text.empty() ? "" : "environmental run: " + validity_text;

  const int code = gate::exit_code(verdicts, opts);
  report::GateReport rep;
  rep.verdicts = verdicts;
  rep.run = *run;
  rep.baseline = baseline_text;
  if (!validity_line.empty()) rep.notes.push_back(validity_line);
  rep.validity = validity;
  rep.strict = opts.strict;
  rep.exit_code = code == util::exit_pass && unjudged > 0 ? util::exit_environment : code;
  fmt::print("{}", report::console_report(rep, a.wide ? 0 : report::kConsoleWidth));
  report::Outputs outputs = report::outputs_from_environment();
  outputs.markdown = a.markdown;
  outputs.json = a.json;
  outputs.junit = a.junit;
  outputs.html = a.html;
  report::publish(rep, outputs);

  if (record) {
    std::vector<store::StoredVerdict> stored;
    auto finite = [](double x) {
      return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
    };
    for (const auto& v : verdicts)
      stored.push_back({v.key, gate::to_string(v.verdict), baseline_label, finite(v.ratio),
                        finite(v.ci_low), finite(v.ci_high), finite(v.p_adjusted), v.reason, 0});
    db.write_verdicts(run->id, stored);
  } else if (!a.no_record) {
    fmt::print("note: {} is not writable; verdicts not recorded\n", a.db);
  }
  if (rep.exit_code == util::exit_environment) {
    std::fflush(stdout);  // the report first: stderr must not land inside its last line
    fmt::print(stderr,
               "attnprof: {} regression(s) left unjudged in an environmental run: measure again "
               "on a quiet machine, or judge them anyway with --strict\n",
               unjudged);
    return util::exit_environment;
  }
  return code;
}

}  // namespace

Action setup_compare(CLI::App& sub) {
  auto a = std::make_shared<CompareArgs>();
  add_db_option(sub, a->db);
  sub.add_option("--run", a->run, "Run to judge: latest, an id or a unique id prefix")
      ->capture_default_str();
  sub.add_option("--baseline", a->baseline,
                 "Baseline file (baselines/<hardware>.yaml), or `history`: earlier runs of the "
                 "baseline branch in the same environment")
      ->required();
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
  sub.add_flag("--no-record", a->no_record, "Do not store the verdicts in the database");
  sub.add_option("--markdown", a->markdown, "Also write the markdown report to this file");
  sub.add_option("--json", a->json, "Also write the verdicts as JSON to this file");
  sub.add_option("--junit", a->junit, "Also write JUnit XML (one testcase per case) to this file");
  sub.add_option("--html", a->html, "Also write a self-contained HTML report to this file");
  sub.add_flag("--wide", a->wide, "Print whole case keys and reasons, however wide the table");
  return [a] { return compare(*a); };
}

}  // namespace attnprof::cli
