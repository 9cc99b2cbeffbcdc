#include "harness/cli/verdict_output.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "harness/gate/annotations.h"
#include "harness/report/verdicts.h"
#include "harness/scenario/values.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

void write_file(const std::string& path, const std::string& text, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  if (!out) throw util::EnvironmentError(path + ": cannot write");
  out << text;
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

int emit_verdicts(std::vector<gate::CaseVerdict>& verdicts, const gate::Options& options,
                  const VerdictOutput& out) {
  const core::Run& run = *out.run;
  std::vector<store::Annotation> notes = out.db->annotations();
  if (out.accept_from_commit) {
    for (auto& t : commit_trailers(run)) {
      bool known = false;
      for (const auto& n : notes) known = known || same_annotation(n, t);
      if (known) continue;
      if (out.record) t.id = out.db->add_annotation(t);  // audited, a boundary for history
      fmt::print("Perf-Accept: {} in run {} by {}: {}\n", t.case_glob, run.id, t.author, t.reason);
      notes.push_back(std::move(t));
    }
  }
  gate::apply_annotations(verdicts, run, notes);

  fmt::print("baseline: {}\n", out.baseline_text);
  fmt::print("{}", report::verdict_table(verdicts));
  fmt::print("{}\n", report::verdict_counts(verdicts));

  const std::string md = report::verdict_markdown(verdicts, run, out.baseline_text, out.md_notes);
  if (!out.markdown_path.empty()) write_file(out.markdown_path, md, false);
  if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary)
    write_file(summary, md, true);
  if (std::getenv("GITHUB_ACTIONS")) fmt::print("{}", report::verdict_annotations(verdicts));
  if (!out.json_path.empty()) {
    nlohmann::json j = nlohmann::json::parse(report::verdict_json(verdicts, run));
    j["baseline"] = out.baseline_text;
    if (out.json_extra.is_object()) j.update(out.json_extra);
    write_file(out.json_path, j.dump(2) + "\n", false);
  }
  if (out.record) {
    std::vector<store::StoredVerdict> stored;
    auto finite = [](double x) {
      return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
    };
    for (const auto& v : verdicts)
      stored.push_back({v.key, gate::to_string(v.verdict), out.baseline_label, finite(v.ratio),
                        finite(v.ci_low), finite(v.ci_high), finite(v.p_adjusted), v.reason, 0});
    out.db->write_verdicts(run.id, stored);
  }
  return gate::exit_code(verdicts, options);
}

}  // namespace attnprof::cli
