// attnprof compare: verdicts for a stored run against a baseline file; the CI gate.
// Prints a table, appends a markdown summary to $GITHUB_STEP_SUMMARY and emits ::error /
// ::warning annotations when run under GitHub Actions; exit 1 on a regression.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "harness/cli/commands.h"
#include "harness/gate/baseline.h"
#include "harness/gate/compare.h"
#include "harness/report/verdicts.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

struct CompareArgs {
  std::string db, run = "latest", baseline, tolerance, markdown, json;
  bool strict = false;
};

double parse_percent(const std::string& s) {
  std::string t = s;
  bool pct = !t.empty() && t.back() == '%';
  if (pct) t.pop_back();
  try {
    size_t used = 0;
    double v = std::stod(t, &used);
    if (used == t.size() && v >= 0) return pct ? v / 100 : v;
  } catch (const std::exception&) {
  }
  throw util::InputError(util::Diagnostic{"--tolerance", 0, 0,
                                          fmt::format("\"{}\" is not a tolerance like 5% or 0.05", s)});
}

void write_file(const std::string& path, const std::string& text, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  if (!out) throw util::EnvironmentError(path + ": cannot write");
  out << text;
}

int compare(const CompareArgs& a) {
  gate::Options opts;
  if (!a.tolerance.empty()) opts.tolerance = parse_percent(a.tolerance);
  opts.strict = a.strict;
  gate::Baseline baseline = gate::load_baseline(a.baseline);

  store::Database db = store::Database::open(a.db, store::Database::Mode::read_only);
  std::optional<core::Run> run = db.load_run(a.run);
  if (!run)
    throw util::InputError(util::Diagnostic{
        "--run", 0, 0, fmt::format("no run \"{}\" in {}", a.run, a.db)});

  std::vector<gate::CaseVerdict> verdicts = gate::compare(baseline, *run, opts);
  fmt::print("{}", report::verdict_table(verdicts));
  fmt::print("{}\n", report::verdict_counts(verdicts));

  const std::string md = report::verdict_markdown(verdicts, *run, a.baseline);
  if (!a.markdown.empty()) write_file(a.markdown, md, false);
  if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary)
    write_file(summary, md, true);
  if (std::getenv("GITHUB_ACTIONS")) fmt::print("{}", report::verdict_annotations(verdicts));
  if (!a.json.empty()) write_file(a.json, report::verdict_json(verdicts, *run), false);
  return gate::exit_code(verdicts, opts);
}

}  // namespace

Action setup_compare(CLI::App& sub) {
  auto a = std::make_shared<CompareArgs>();
  add_db_option(sub, a->db);
  sub.add_option("--run", a->run, "Run to judge: latest, an id or a unique id prefix")
      ->capture_default_str();
  sub.add_option("--baseline", a->baseline, "Baseline file (baselines/<hardware>.yaml)")->required();
  sub.add_option("--tolerance", a->tolerance,
                 "Tolerance for every case, e.g. 5% (default: each case's own, else 5%)");
  sub.add_flag("--strict", a->strict, "Fail on inconclusive comparisons too");
  sub.add_option("--markdown", a->markdown, "Also write the markdown report to this file");
  sub.add_option("--json", a->json, "Also write the verdicts as JSON to this file");
  return [a] { return compare(*a); };
}

}  // namespace attnprof::cli
