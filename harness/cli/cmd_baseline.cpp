// attnprof baseline update: write or refresh a baseline file from stored runs (their summaries
// and samples), e.g. after an intended performance change has been reviewed. From several runs
// (--runs N, or --run given more than once) the file also records each case's run medians, so
// that comparisons against it include how far the case moves between runs.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/cli/bounds.h"
#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/gate/baseline.h"
#include "harness/stats/quantile.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

struct Args {
  std::string db, output, hardware;
  std::vector<std::string> run{"latest"};
  int runs = 0;
  bool include_unstable = false;
};

// The runs to take, newest first: each --run, or the newest --runs N of the first --run's
// environment up to and including it.
std::vector<core::Run> pick_runs(store::Database& db, const Args& a) {
  auto load = [&](const std::string& ref) {
    std::optional<core::Run> run = db.load_run(ref);
    if (!run)
      throw util::InputError(
          util::Diagnostic{"--run", 0, 0, fmt::format("no run \"{}\" in {}", ref, a.db)});
    return std::move(*run);
  };
  if (a.runs == 0) {
    std::vector<core::Run> runs;
    for (const auto& ref : a.run) runs.push_back(load(ref));
    std::stable_sort(runs.begin(), runs.end(), [](const core::Run& x, const core::Run& y) {
      return x.started_ns > y.started_ns;
    });
    return runs;
  }
  if (a.run.size() > 1)
    throw util::InputError(util::Diagnostic{
        "--runs", 0, 0,
        "takes the newest runs up to one --run; give either --runs or several --run"});
  std::vector<core::Run> runs{load(a.run.front())};
  store::RunFilter f;
  f.env_fingerprint = runs.front().env.fingerprint();
  f.until_ns = runs.front().started_ns;
  f.complete_only = true;
  std::vector<store::RunInfo> earlier = db.list_runs(f);  // oldest first
  for (auto it = earlier.rbegin(); it != earlier.rend() && static_cast<int>(runs.size()) < a.runs;
       ++it)
    if (it->id != runs.front().id) runs.push_back(load(it->id));
  if (static_cast<int>(runs.size()) < a.runs)
    throw util::InputError(util::Diagnostic{
        "--runs", 0, 0,
        fmt::format("{} run(s) wanted but {} has only {} complete run(s) in environment {} up to "
                    "run {}",
                    a.runs, a.db, runs.size(), f.env_fingerprint, runs.front().id)});
  return runs;
}

// "run-to-run spread of the case medians: median 2.1%, largest 8.4% (key)", or why there is none.
std::string spread_line(const gate::Baseline& b, std::size_t runs) {
  if (runs < 2)
    return "one run: the file records no run-to-run spread, so comparisons against it will say "
           "that run-to-run noise is unknown (`--runs 3` or more records it)";
  std::vector<double> spreads;
  std::string worst_key;
  double worst = -1;
  for (const auto& [key, c] : b.cases) {
    const auto& m = c.run_medians_ns;
    if (m.size() < 2) continue;
    double mean = 0, var = 0;
    for (double x : m) mean += std::log(x) / static_cast<double>(m.size());
    for (double x : m) var += (std::log(x) - mean) * (std::log(x) - mean);
    const double sd = std::exp(std::sqrt(var / static_cast<double>(m.size() - 1))) - 1;
    spreads.push_back(sd);
    if (sd > worst) worst = sd, worst_key = key;
  }
  if (spreads.empty()) return "no case completed in two or more runs: no run-to-run spread";
  std::string line = fmt::format(
      "run-to-run spread (sd of log run medians) of {} case(s): median {:.1f}%, largest {:.1f}% "
      "({})",
      spreads.size(), stats::median(spreads) * 100, worst * 100, worst_key);
  if (runs < 3) line += "; two runs say little about the spread, 3 or more are better";
  return line;
}

}  // namespace

Action setup_baseline(CLI::App& sub) {
  auto a = std::make_shared<Args>();
  sub.require_subcommand(1);
  CLI::App* update = sub.add_subcommand("update", "Write a baseline file from stored runs");
  add_db_option(*update, a->db);
  update
      ->add_option("--run", a->run,
                   "Run to take: latest, an id or a unique id prefix; more than once to take "
                   "several runs (their run-to-run spread is recorded)")
      ->capture_default_str();
  update
      ->add_option("--runs", a->runs,
                   "Take the newest N complete runs of --run's environment, up to --run, and "
                   "record each case's run-to-run spread (3 or more recommended)")
      ->check(bound(Range{.lo = 1, .hi = 1000, .what = "a whole number"}));
  update->add_option("--output,-o", a->output, "Baseline file to write (folders are created)")
      ->required();
  update->add_option("--hardware", a->hardware,
                     "Hardware name recorded in the file (default: the run's device)");
  update->add_flag("--include-unstable", a->include_unstable,
                   "Keep cases a busy machine made unstable (left out by default: their figures "
                   "are the machine's, not the code's)");
  return [a] {
    store::Database db = open_history(a->db, store::Database::Mode::read_only);
    const std::vector<core::Run> runs = pick_runs(db, *a);
    const core::Run& newest = runs.front();
    std::string hw = a->hardware;
    if (hw.empty()) {
      auto it = newest.env.fields.find("device.name");
      hw = it != newest.env.fields.end() ? it->second : "unknown";
    }
    const gate::Baseline b =
        gate::make_baseline(runs, {.hardware = hw, .include_unstable = a->include_unstable});
    std::string ids;
    for (const auto& r : runs) ids += (ids.empty() ? "" : ", ") + r.id;
    // A baseline without a case compares nothing: a gate against it passes whatever happens.
    // Say why each case was left out, and leave the file as it was.
    if (b.cases.empty()) {
      for (const auto& [key, note] : b.notes) fmt::print(stderr, "left out: {}: {}\n", key, note);
      const std::string runs_named =
          fmt::format("run{} {}", runs.size() > 1 ? "s" : "", ids);
      if (b.notes.empty())
        throw util::EnvironmentError(fmt::format(
            "baseline: no case of {} is ok, so none can be a baseline; {} not written",
            runs_named, a->output));
      throw util::EnvironmentError(fmt::format(
          "baseline: no case of {} can be a baseline ({} left out); {} not written (run again "
          "on a quieter machine, or --include-unstable to keep a busy machine's figures)",
          runs_named, b.notes.size(), a->output));
    }
    gate::write_baseline(a->output, b);
    fmt::print("baseline {} written from run{} {}: {} case(s)\n", a->output,
               runs.size() > 1 ? "s" : "", ids, b.cases.size());
    fmt::print("{}\n", spread_line(b, runs.size()));
    for (const auto& [key, note] : b.notes) fmt::print("left out: {}: {}\n", key, note);
    for (const auto& r : runs)
      if (r.git_commit != newest.git_commit) {
        fmt::print(
            "note: the runs are of different commits; a real change between them counts "
            "as spread\n");
        break;
      }
    return 0;
  };
}

}  // namespace attnprof::cli
