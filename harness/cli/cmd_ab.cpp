// attnprof ab --base PATH [--head PATH] [scenarios...]: the paired gate. Two workers (the merge
// base's build and the pull request's, or one build with two settings or two plugin versions)
// measure every case interleaved, in rounds, so both see the same machine (harness/ab/driver.h
// says why and how), and every case is measured by several pairs of fresh workers, so a bias
// one process carries is seen as such (harness/ab/session.h); the verdicts come from the rounds
// within pairs and the pairs within the case (harness/gate/paired.h, docs/statistics.md), with
// the tolerances, annotations, Perf-Accept trailers, reports and exit codes of `compare`. For
// every regression and improvement, the diff of the two sides' cost matrices says which op moved.
// Both sides are stored as runs linked by one pair id, with every round, so `attnprof compare
// --pair` can judge them again. When both sides are the same build (an A/A: one worker, the same
// arguments and plugins), the first line and every report say so (report::kSameBuildNote).
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "harness/ab/session.h"
#include "harness/ab/workers.h"
#include "harness/cli/ab_options.h"
#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/report/progress.h"
#include "harness/report/verdicts.h"
#include "harness/store/database.h"
#include "harness/util/error.h"
#include "harness/worker/client.h"
#include "harness/worker/wait_policy.h"

namespace attnprof::cli {
namespace {

// Each pair of workers as a block of progress lines, live on a terminal; the workers' output
// between lines.
struct Console {
  std::unique_ptr<report::Progress> progress;
  int max_pairs = 0;
  ab::Observer observer() {
    ab::Observer o;
    o.pair_started = [this](int pair, int cases) {
      if (progress) progress->done();
      if (pair > 0)
        fmt::print("pair {} of at most {}: {} case(s) not settled, in fresh workers\n", pair + 1,
                   max_pairs, cases);
      std::fflush(stdout);
      progress = std::make_unique<report::Progress>(cases);
    };
    o.case_started = [this](const std::string& key) { progress->start(key); };
    o.case_done = [this](const std::string& key, const std::string& line) {
      progress->finish(key, line);
    };
    o.message = [this](const std::string& line) { progress->message(line); };
    return o;
  }
};

worker::Spawn spawn(const std::string& path, const std::vector<std::string>& args,
                    const std::string& option, const std::string& label) {
  return {path.empty() ? worker::default_worker() : worker::resolve_worker(path, option), args,
          label};
}

// The suite's cases: a kernel either side knows is a case, checked against both sides' plugins
// before anything is measured.
std::vector<core::Case> ab_cases(const AbArgs& a, const worker::Described& both) {
  std::vector<core::Case> cases = load_cases(a.files, both.kernels, a.shard, a.case_globs);
  check_plugin_ops(cases, both);
  if (auto missing = missing_packages(cases); !missing.empty())
    throw util::InputError(std::move(missing));
  return cases;
}

}  // namespace

int run_ab(const AbArgs& a, AbOutcome* outcome) {
  const gate::Options opts = gate_options(a);
  worker::Spawn base = spawn(a.base, a.base_args, "--base", "base");  // its errors first
  const ab::Sides s =
      ab::sides(std::move(base), spawn(a.head, a.head_args, "--head", "head"), a.env);
  // First, before the workers start: whoever reads this log (or a gate script reading its first
  // line) knows at once that no change is being measured.
  const bool aa = ab::same_build(s.base, s.head);
  if (aa) fmt::print("{}\n", report::kSameBuildNote);
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  const ab::SessionOptions so = session_options(a, opts);
  ab::Session session(s.base, s.head, so);
  const worker::Described& bd = session.base().described();  // the base starts first
  const std::vector<core::Case> cases = ab_cases(a, ab::both_sides(bd, session.head().described()));
  store::Database db = open_history(a.db);
  core::Run shared;
  a.meta.fill(shared);
  ab::StoredPair pair = ab::begin_pair(db, shared, a.base_commit, session, cases.front());
  if (!pair.warning.empty()) fmt::print(stderr, "attnprof: warning: {}\n", pair.warning);

  fmt::print(
      "attnprof ab: {} case(s); base {}, head {}; each case measured by {} to {} pairs of fresh "
      "workers; {}{}\n",
      cases.size(), s.base.executable, s.head.executable, so.stop.min_pairs, so.stop.max_pairs,
      session.cpu_placement(), s.wait_policy_chosen ? "" : "; " + worker::wait_policy_note(false));
  std::fflush(stdout);
  Console console;
  console.max_pairs = so.stop.max_pairs;
  session.run(cases, pair.sink, console.observer());
  if (console.progress) console.progress->done();
  // The whole session, every pair of workers and the first pair's start included.
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ab::finish_pair(pair);

  // Judged from what was stored, the way `attnprof compare --pair` judges it again.
  PairJudgement j;
  j.options = opts;
  j.files = a.reports;
  j.accept_from_commit = a.accept_from_commit;
  j.diff_rows = a.diff_rows;
  j.same_build = aa;
  j.pair_seconds = session.pair_seconds();
  const int code = judge_pair(db, pair.sink.pair_id, j, outcome ? &outcome->verdicts : nullptr);
  fmt::print(
      "\nA/B pair {} stored in {} (base run {}, head run {}); {} pair(s) of workers, "
      "{:.1f} s\n",
      pair.sink.pair_id, a.db, pair.base.id, pair.head.id, session.pairs_started(), wall_s);
  if (outcome) {
    outcome->pair_id = pair.sink.pair_id;
    outcome->seconds = wall_s;
  }
  return code;
}

Action setup_ab(CLI::App& sub) {
  auto a = std::make_shared<AbArgs>();
  add_ab_options(sub, *a);
  return [a] { return run_ab(*a); };
}

}  // namespace attnprof::cli
