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

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>

#include "harness/ab/driver.h"
#include "harness/ab/session.h"
#include "harness/cli/commands.h"
#include "harness/cli/run_metadata.h"
#include "harness/cli/verdict_output.h"
#include "harness/env/environment.h"
#include "harness/gate/paired.h"
#include "harness/gate/timing_mode.h"
#include "harness/report/progress.h"
#include "harness/report/verdicts.h"
#include "harness/store/database.h"
#include "harness/util/error.h"
#include "harness/util/format.h"
#include "harness/worker/supervisor.h"

namespace attnprof::cli {
namespace {

struct AbArgs {
  std::string base, head;
  std::vector<std::string> base_args, head_args, env;
  std::vector<std::string> files, case_globs;
  std::optional<std::string> shard;
  std::string db, tolerance;
  ReportFiles reports;
  bool strict = false, no_trace = false, accept_from_commit = false, confirm = true;
  bool layout_pad = true;
  double batch_ms = 25, case_timeout_s = 0, budget_scale = 1, time_limit_s = 0;
  int max_rounds = 16, diff_rows = 8, min_pairs = 3, max_pairs = 12;
  std::string base_commit;
  RunMetadata meta;
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

gate::PairedSide side_of(const core::CaseResult& r) {
  return {r.status, r.message, r.status == core::CaseStatus::ok ? gate::timing_mode(r) : ""};
}

// A stored A/B as the gate's input: one PairedCase per case either run has, with what one more
// pair of workers costs it where the session that measured it says so.
std::vector<gate::PairedCase> paired_cases(const core::Run& base, const core::Run& head,
                                           const std::vector<store::AbRound>& rounds,
                                           const std::map<std::string, double>& pair_seconds) {
  std::vector<gate::PairedCase> out;
  std::map<std::string, std::size_t> at;
  auto add = [&](const core::CaseResult& r, bool is_head) {
    auto [it, fresh] = at.try_emplace(r.spec.key, out.size());
    if (fresh) out.push_back({r.spec.key, r.spec.gate.tolerance, std::nullopt, std::nullopt, {}});
    (is_head ? out[it->second].head : out[it->second].base) = side_of(r);
  };
  for (const auto& r : head.cases) add(r, true);
  for (const auto& r : base.cases) add(r, false);
  for (const auto& r : rounds)
    if (auto it = at.find(r.case_key); it != at.end())
      out[it->second].rounds.push_back({r.base_ns, r.head_ns, !r.base_first, r.pass});
  for (auto& pc : out)
    if (auto it = pair_seconds.find(pc.key); it != pair_seconds.end()) pc.pair_seconds = it->second;
  return out;
}

int judge_stored_pair(store::Database& db, const std::string& ref, const PairJudgement& j,
                      const std::map<std::string, double>& pair_seconds);

}  // namespace

int judge_pair(store::Database& db, const std::string& ref, const PairJudgement& j) {
  return judge_stored_pair(db, ref, j, {});
}

namespace {

// judge_pair(), and from ab the seconds one more pair of workers costs each case, so an
// unsettled verdict says how many more minutes it would take.
int judge_stored_pair(store::Database& db, const std::string& ref, const PairJudgement& j,
                      const std::map<std::string, double>& pair_seconds) {
  auto pair = db.find_pair(ref);
  if (!pair)
    throw util::InputError(
        util::Diagnostic{"--pair", 0, 0, fmt::format("no A/B pair \"{}\" in {}", ref, db.path())});
  std::optional<core::Run> base = db.load_run(pair->first.id), head = db.load_run(pair->second.id);
  if (!base || !head)
    throw util::EnvironmentError(fmt::format("{}: A/B pair {} lost a run", db.path(), ref));
  const std::string pair_id = head->pair_id;
  report::GateReport rep;
  rep.mode = "ab";
  rep.notes = j.notes;
  if (head->status != "complete" || base->status != "complete")
    rep.notes.push_back(fmt::format(
        "A/B pair {} is incomplete (stopped before its end): judging the cases it finished",
        pair_id.substr(0, 8)));
  const auto rounds = db.rounds(pair_id);
  std::vector<gate::CaseVerdict> verdicts =
      gate::compare_paired(paired_cases(*base, *head, rounds, pair_seconds), j.options);
  apply_notes(verdicts, *head, db, j.accept_from_commit, j.record);

  // The rounds of every case, and for every regression and improvement which op moved.
  report::AbDetail detail;
  detail.base = *base;
  detail.base_label = fmt::format(
      "base {}", base->git_commit.empty() ? base->id.substr(0, 8) : base->git_commit.substr(0, 12));
  detail.head_label = fmt::format(
      "head {}", head->git_commit.empty() ? head->id.substr(0, 8) : head->git_commit.substr(0, 12));
  detail.same_build = j.same_build;
  std::string moved;
  for (const auto& v : verdicts) {
    report::AbCase ac;
    ac.key = v.key;
    for (const auto& r : rounds)
      if (r.case_key == v.key) ac.rounds.push_back({r.base_ns, r.head_ns, !r.base_first});
    if (v.verdict == gate::Verdict::regression || v.verdict == gate::Verdict::improvement) {
      const core::CaseResult *b = nullptr, *h = nullptr;
      for (const auto& r : base->cases)
        if (r.spec.key == v.key) b = &r;
      for (const auto& r : head->cases)
        if (r.spec.key == v.key) h = &r;
      if (b && h) ac.ops = report::diff_cost(b->cost, h->cost);
      if (!ac.ops.empty())
        moved += fmt::format("\nwhat moved in {} ({}, {:.3f}x):\n{}", v.key,
                             gate::to_string(v.verdict), v.ratio,
                             report::op_diff_console(ac.ops, static_cast<std::size_t>(j.diff_rows),
                                                     j.files.wide ? 0 : report::kConsoleWidth));
    }
    detail.cases.push_back(std::move(ac));
  }
  rep.ab = std::move(detail);
  rep.verdicts = verdicts;
  rep.run = *head;
  // The base side's commit, where the caller named it (--base-commit): the report names both.
  rep.baseline =
      fmt::format("A/B pair {} (base run {}{})", pair_id.substr(0, 8), base->id.substr(0, 8),
                  base->git_commit.empty() ? "" : " at commit " + base->git_commit.substr(0, 12));
  rep.strict = j.options.strict;
  rep.exit_code = gate::exit_code(verdicts, j.options);
  publish_report(rep, j.files);
  if (!moved.empty()) fmt::print("{}", moved);
  if (j.record) record_verdicts(db, head->id, verdicts, "ab:" + pair_id);
  return rep.exit_code;
}

gate::Options gate_options(const AbArgs& a) {
  gate::Options opts;
  if (!a.tolerance.empty()) opts.tolerance = parse_tolerance(a.tolerance);
  opts.strict = a.strict;
  if (a.batch_ms <= 0)
    throw util::InputError(util::Diagnostic{"--batch-ms", 0, 0, "must be positive"});
  if (a.max_rounds < gate::min_pair_rounds)
    throw util::InputError(util::Diagnostic{
        "--max-rounds", 0, 0,
        fmt::format("at least {} rounds per pair of workers are needed for its own estimate",
                    gate::min_pair_rounds)});
  if (a.max_pairs < 1)
    throw util::InputError(util::Diagnostic{"--max-pairs", 0, 0, "must be at least 1"});
  if (a.min_pairs < 2 || a.min_pairs > a.max_pairs)
    throw util::InputError(util::Diagnostic{
        "--min-pairs", 0, 0,
        fmt::format("must be between 2 and --max-pairs ({}): one pair of workers cannot show "
                    "its own bias",
                    a.max_pairs)});
  return opts;
}

// How the two workers start: each side's own arguments, then the environment both share.
struct Sides {
  worker::Spawn base, head;
  bool wait_policy_chosen = false;  // OMP_WAIT_POLICY set by the user
};

Sides sides(const AbArgs& a) {
  Sides s;
  s.base = {a.base.empty() ? worker::default_worker() : worker::resolve_worker(a.base, "--base"),
            a.base_args, "base"};
  s.head = {a.head.empty() ? worker::default_worker() : worker::resolve_worker(a.head, "--head"),
            a.head_args, "head"};
  // OpenMP threads that spin at barriers turn a busy machine into time-slice stalls in one
  // worker and not the other (a 0.33 ms case at 8 ms for whole passes, here); sleeping threads
  // cost a little per parallel region on both sides alike. Unless the user chose a policy.
  std::vector<std::string> env = a.env;
  s.wait_policy_chosen = std::getenv("OMP_WAIT_POLICY") != nullptr ||
                         std::any_of(env.begin(), env.end(), [](const std::string& e) {
                           return e.starts_with("OMP_WAIT_POLICY=");
                         });
  if (!s.wait_policy_chosen) env.insert(env.begin(), "OMP_WAIT_POLICY=PASSIVE");
  for (const auto& e : env) {
    s.base.args.push_back("--env=" + e);
    s.head.args.push_back("--env=" + e);
  }
  return s;
}

std::string real_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

// The worker's arguments with every plugin named by its real path: the worker loads a bare name
// from the working folder, so "a.so", "./a.so" and a symlink to it are one plugin.
std::vector<std::string> with_real_plugin_paths(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].starts_with("--plugin="))
      out.push_back("--plugin=" + real_path(args[i].substr(9)));
    else if (args[i] == "--plugin" && i + 1 < args.size())
      out.push_back("--plugin=" + real_path(args[++i]));
    else
      out.push_back(args[i]);
  }
  return out;
}

// An A/A: one worker executable (build folders and symlinks resolved) with the same arguments
// and plugin files on both sides. The cases, and the AOTInductor packages they name, are the same
// on both sides by construction; a package swapped on one side (--substitute) is an argument.
bool same_build(const worker::Spawn& base, const worker::Spawn& head) {
  return real_path(base.executable) == real_path(head.executable) &&
         with_real_plugin_paths(base.args) == with_real_plugin_paths(head.args);
}

// The suite's cases: a kernel either side knows is a case (one the base lacks is new, one the
// head lacks missing), checked against both sides' plugins before anything is measured.
std::vector<core::Case> ab_cases(const AbArgs& a, const worker::Described& bd,
                                 const worker::Described& hd) {
  std::vector<std::string> kernels = hd.kernels;
  for (const auto& k : bd.kernels)
    if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(k);
  std::vector<core::Case> cases = load_cases(a.files, kernels, a.shard, a.case_globs);
  worker::Described both = hd;
  both.plugins.insert(both.plugins.end(), bd.plugins.begin(), bd.plugins.end());
  check_plugin_ops(cases, both);
  if (auto missing = missing_packages(cases); !missing.empty())
    throw util::InputError(std::move(missing));
  return cases;
}

// Both runs begun in the store, linked by a new pair id, each with its side's environment.
ab::Sink begin_runs(store::Database& db, const AbArgs& a, const core::Case& first,
                    ab::Session& session, core::Run& base_run, core::Run& head_run) {
  const std::string id = store::new_run_id();
  a.meta.fill(head_run);
  head_run.started_ns = now_ns();
  head_run.pair_id = id;
  head_run.side = "head";
  head_run.env = env::fingerprint_for(session.head().described().env, first.hardware.device,
                                      first.hardware.clock_policy);
  base_run = head_run;
  base_run.side = "base";
  base_run.git_commit = a.base_commit;
  base_run.env = env::fingerprint_for(session.base().described().env, first.hardware.device,
                                      first.hardware.clock_policy);
  head_run.id = db.begin_run(head_run);
  base_run.id = db.begin_run(base_run);
  if (base_run.env.fingerprint() != head_run.env.fingerprint())
    fmt::print(stderr,
               "attnprof: warning: base and head describe different environments ({} vs {}): "
               "their LibTorch or CUDA versions differ; that difference is part of what is "
               "measured\n",
               base_run.env.fingerprint().substr(0, 12), head_run.env.fingerprint().substr(0, 12));
  return ab::Sink{db, id, base_run.id, head_run.id};
}

ab::SessionOptions session_options(const AbArgs& a, const gate::Options& opts) {
  ab::SessionOptions so;
  so.rounds.batch_ms = a.batch_ms;
  so.rounds.max_rounds = a.max_rounds;
  so.rounds.budget_scale = a.budget_scale;
  so.rounds.timeout_s = a.case_timeout_s;
  so.rounds.trace = !a.no_trace;
  // --no-confirm: one pair of workers, a quick look that settles nothing (no verdict rests on
  // one pair).
  so.stop.max_pairs = a.confirm ? a.max_pairs : 1;
  so.stop.min_pairs = std::min(a.min_pairs, so.stop.max_pairs);
  so.stop.confidence = opts.confidence;
  so.gate = opts;
  so.time_limit_s = a.time_limit_s;
  so.randomize_layout = a.layout_pad;
  return so;
}

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

int ab(const AbArgs& a) {
  const gate::Options opts = gate_options(a);
  const Sides s = sides(a);
  // First, before the workers start: whoever reads this log (or a gate script reading its first
  // line) knows at once that no change is being measured.
  const bool aa = same_build(s.base, s.head);
  if (aa) fmt::print("{}\n", report::kSameBuildNote);
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  const ab::SessionOptions so = session_options(a, opts);
  ab::Session session(s.base, s.head, so);
  const worker::Described& bd = session.base().described();  // the base starts first
  const std::vector<core::Case> cases = ab_cases(a, bd, session.head().described());
  store::Database db = store::Database::open(a.db);
  core::Run base_run, head_run;
  ab::Sink sink = begin_runs(db, a, cases.front(), session, base_run, head_run);

  fmt::print(
      "attnprof ab: {} case(s); base {}, head {}; each case measured by {} to {} pairs of fresh "
      "workers{}\n",
      cases.size(), s.base.executable, s.head.executable, so.stop.min_pairs, so.stop.max_pairs,
      s.wait_policy_chosen ? "" : "; workers run with OMP_WAIT_POLICY=PASSIVE (set it to choose)");
  std::fflush(stdout);
  Console console;
  console.max_pairs = so.stop.max_pairs;
  session.run(cases, sink, console.observer());
  if (console.progress) console.progress->done();
  // The whole session, every pair of workers and the first pair's start included.
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (core::Run* run : {&base_run, &head_run}) db.finish_run(run->id, now_ns(), run->env);

  // Judged from what was stored, the way `attnprof compare --pair` judges it again.
  PairJudgement j;
  j.options = opts;
  j.files = a.reports;
  j.accept_from_commit = a.accept_from_commit;
  j.diff_rows = a.diff_rows;
  j.same_build = aa;
  const int code = judge_stored_pair(db, sink.pair_id, j, session.pair_seconds());
  fmt::print("\nA/B pair {} stored in {} (base run {}, head run {}); {} pair(s) of workers, "
             "{:.1f} s\n",
             sink.pair_id, a.db, base_run.id, head_run.id, session.pairs_started(), wall_s);
  return code;
}

}  // namespace

Action setup_ab(CLI::App& sub) {
  auto a = std::make_shared<AbArgs>();
  sub.add_option("scenarios", a->files, "Scenario files (default: the embedded smoke suite)");
  sub.add_option("--base", a->base,
                 "The base side: an attnprof-worker executable, or the build folder holding one "
                 "(e.g. the merge base's build; default: the worker beside this attnprof, for "
                 "two plugins or settings with --base-arg and --head-arg)");
  sub.add_option("--head", a->head,
                 "The head side, likewise (default: the worker beside this attnprof)");
  sub.add_option("--base-arg", a->base_args,
                 "An argument for the base worker, e.g. --base-arg=--threads=1 or "
                 "--base-arg=--plugin=old.so");
  sub.add_option("--head-arg", a->head_args, "An argument for the head worker");
  sub.add_option("--env", a->env,
                 "NAME=VALUE in both workers' environment, set before they start. "
                 "OMP_WAIT_POLICY is PASSIVE unless set here or in attnprof's environment");
  add_db_option(sub, a->db);
  sub.add_option("--case", a->case_globs, "Only cases whose key matches this glob");
  sub.add_option("--shard", a->shard, "Only CI shard i of n (e.g. 2/4)");
  sub.add_option("--tolerance", a->tolerance,
                 "Tolerance for every case, e.g. 5% (default: each case's own, else 5%)");
  sub.add_flag("--strict", a->strict, "Fail on inconclusive verdicts too");
  sub.add_flag("--accept-from-commit-message", a->accept_from_commit,
               "Accept regressions named by `Perf-Accept: <glob> <reason>` trailers of the "
               "commit(s) under test (git log)");
  add_report_options(sub, a->reports);
  sub.add_option("--batch-ms", a->batch_ms, "Work per side per round, in ms")
      ->capture_default_str();
  sub.add_option("--max-rounds", a->max_rounds, "Rounds per case and pair of workers at most")
      ->capture_default_str();
  sub.add_option("--min-pairs", a->min_pairs,
                 "Pairs of fresh workers every case is measured by before its verdict settles")
      ->capture_default_str();
  sub.add_option("--max-pairs", a->max_pairs,
                 "Pairs of fresh workers a case is measured by at most (the stop rule ends "
                 "sooner once its interval settles against the tolerance)")
      ->capture_default_str();
  sub.add_option("--time-limit", a->time_limit_s,
                 "Seconds for the whole session: no pair of workers starts that would end after "
                 "it; unsettled cases say how many more minutes they would need (0: no limit)")
      ->capture_default_str();
  sub.add_flag("!--no-layout-padding", a->layout_pad,
               "Start the workers without a random-length environment variable (it moves their "
               "initial stack, a layout bias each pair of workers then has its own draw of)");
  sub.add_option("--budget-scale", a->budget_scale,
                 "Scale each case's time budget (measure.time_budget) for its rounds")
      ->capture_default_str();
  sub.add_flag("--no-trace", a->no_trace, "Skip the traced passes (no per-op diff)");
  sub.add_flag("!--no-confirm", a->confirm,
               "One pair of workers per case (--max-pairs 1): a quick look, and every measured "
               "case inconclusive, since no verdict rests on one pair");
  sub.add_option("--diff-rows", a->diff_rows, "Rows of each per-op diff to print")
      ->capture_default_str();
  sub.add_option("--case-timeout", a->case_timeout_s,
                 "Seconds a worker may take for one step before it counts as hung");
  sub.add_option("--base-commit", a->base_commit, "The base side's commit, for the record");
  a->meta.add_options(sub);
  return [a] { return ab(*a); };
}

}  // namespace attnprof::cli
