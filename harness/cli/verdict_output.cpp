// What compare and ab do with their verdicts (verdict_output.h): --tolerance, annotations and
// Perf-Accept trailers, the report options and publishing, recording the verdicts, and a stored
// A/B judged (harness/ab/judge.h) and published.
#include "harness/cli/verdict_output.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "harness/ab/judge.h"
#include "harness/cli/bounds.h"
#include "harness/cli/command.h"
#include "harness/cli/run_metadata.h"
#include "harness/gate/annotations.h"
#include "harness/report/findings.h"
#include "harness/report/publish.h"
#include "harness/scenario/values.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

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

bool same_annotation(const store::Annotation& a, const store::Annotation& b) {
  return a.kind == b.kind && a.case_glob == b.case_glob && a.run_id == b.run_id &&
         a.reason == b.reason && a.author == b.author;
}

}  // namespace

double parse_tolerance(const std::string& s) {
  std::optional<double> v = scenario::parse_percent(s);
  if (!v) v = scenario::parse_number(s);
  if (v && *v >= 0) return *v;
  throw util::InputError(util::Diagnostic{
      "--tolerance", 0, 0, fmt::format("\"{}\" is not a tolerance like 5% or 0.05", s)});
}

void apply_notes(std::vector<gate::CaseVerdict>& verdicts, const core::Run& run,
                 store::Database& db, bool from_commit, bool record) {
  std::vector<store::Annotation> notes = db.annotations();
  if (from_commit) {
    for (auto& t : commit_trailers(run)) {
      bool known = false;
      for (const auto& n : notes) known = known || same_annotation(n, t);
      if (known) continue;
      if (record) t.id = db.add_annotation(t);  // audited, and a boundary for history on main
      fmt::print("Perf-Accept: {} in run {} by {}: {}\n", t.case_glob, run.id, t.author, t.reason);
      notes.push_back(std::move(t));
    }
  }
  gate::apply_annotations(verdicts, run, notes);
}

void add_finding_options(CLI::App& sub, gate::FindingRules& rules) {
  sub.add_flag("--fail-on-kernel-change", rules.fail_on_kernel_change,
               "Fail the gate (exit 1) when a case ran other kernels (GPU) or ATen ops (CPU) than "
               "its baseline, or sdpa.auto chose another backend (otherwise a warning)");
  sub.add_flag("--fail-on-accuracy", rules.fail_on_accuracy,
               "Fail the gate (exit 1) when a case's error against its reference grew beyond "
               "--accuracy-factor times the baseline's (otherwise a warning)");
  sub.add_flag("--fail-on-compile", rules.fail_on_compile,
               "Fail the gate (exit 1) when a torch.compile case compiled more than "
               "--compile-factor times slower or faster than its baseline, or into more graph "
               "breaks (otherwise a warning)");
  sub.add_option("--compile-factor", rules.compile_factor,
                 "How many times the baseline's compile time a case's may be (or its inverse) "
                 "before it is `compile changed`")
      ->capture_default_str()
      ->check(bound(Range{.lo = 1, .above = true}, "FACTOR"));
  sub.add_option("--accuracy-factor", rules.accuracy_factor,
                 "How many times the baseline's largest (or mean) error a case's may be before it "
                 "is `accuracy changed`; errors below the dtype's epsilon count as the epsilon")
      ->capture_default_str()
      ->check(bound(Range{.lo = 1, .above = true}, "FACTOR"));
}

void add_report_options(CLI::App& sub, ReportFiles& f) {
  sub.add_option("--markdown", f.markdown, "Also write the markdown report to this file");
  sub.add_option("--json", f.json, "Also write the verdicts as JSON to this file");
  sub.add_option("--junit", f.junit, "Also write JUnit XML (one testcase per case) to this file");
  sub.add_option("--html", f.html, "Also write a self-contained HTML report to this file");
  add_wide_option(sub, f.wide);
}

void publish_report(const report::GateReport& rep, const ReportFiles& f) {
  fmt::print("{}", report::console_report(rep, table_width(f.wide)));
  report::Outputs outputs = report::outputs_from_environment();
  outputs.markdown = f.markdown;
  outputs.json = f.json;
  outputs.junit = f.junit;
  outputs.html = f.html;
  report::publish(rep, outputs);
  std::fflush(stdout);
}

void record_verdicts(store::Database& db, const std::string& run_id,
                     const std::vector<gate::CaseVerdict>& verdicts, const std::string& label) {
  std::vector<store::StoredVerdict> stored;
  auto finite = [](double x) { return std::isfinite(x) ? std::optional<double>(x) : std::nullopt; };
  for (const auto& v : verdicts) {
    std::string detail = v.reason;  // and the findings beside it, for `show` to print
    for (const auto& f : v.findings.list) detail += "; " + report::finding_text(f);
    stored.push_back({v.key, gate::to_string(v.verdict), label, finite(v.ratio), finite(v.ci_low),
                      finite(v.ci_high), finite(v.p_adjusted), detail, 0});
  }
  db.write_verdicts(run_id, stored);
}

int judge_pair(store::Database& db, const std::string& ref, const PairJudgement& j,
               std::vector<gate::CaseVerdict>* verdicts) {
  ab::Judging judging;
  judging.options = j.options;
  judging.notes = j.notes;
  judging.same_build = j.same_build;
  judging.diff_rows = j.diff_rows;
  judging.width = table_width(j.files.wide);
  judging.pair_seconds = j.pair_seconds;
  judging.annotate = [&](std::vector<gate::CaseVerdict>& verdicts, const core::Run& head) {
    apply_notes(verdicts, head, db, j.accept_from_commit, j.record);
  };
  std::optional<ab::Judged> judged = ab::judge_pair(db, ref, judging);
  if (!judged)
    throw util::InputError(
        util::Diagnostic{"--pair", 0, 0, fmt::format("no A/B pair \"{}\" in {}", ref, db.path())});
  publish_report(judged->report, j.files);
  if (!judged->moved.empty()) fmt::print("{}", judged->moved);
  if (j.record)
    record_verdicts(db, judged->head_run, judged->report.verdicts, "ab:" + judged->pair_id);
  if (verdicts) *verdicts = judged->report.verdicts;
  return judged->report.exit_code;
}

}  // namespace attnprof::cli
