// attnprof ab --base PATH [--head PATH] [scenarios...]: the paired gate. Two workers (the merge
// base's build and the pull request's, or one build with two settings or two plugin versions)
// measure every case interleaved, in rounds, so both see the same machine (harness/ab/driver.h
// says why and how); the verdicts come from the per-round ratios (harness/gate/paired.h), with
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
#include "harness/cli/commands.h"
#include "harness/cli/run_metadata.h"
#include "harness/cli/verdict_output.h"
#include "harness/env/environment.h"
#include "harness/gate/paired.h"
#include "harness/gate/timing_mode.h"
#include "harness/kernel/package.h"
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
  double batch_ms = 25, case_timeout_s = 0, budget_scale = 1;
  int max_rounds = 128, diff_rows = 8;
  std::string base_commit;
  RunMetadata meta;
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<gate::PairedRound> paired_rounds(const std::vector<store::AbRound>& rounds) {
  std::vector<gate::PairedRound> out;
  out.reserve(rounds.size());
  for (const auto& r : rounds) out.push_back({r.base_ns, r.head_ns, !r.base_first});
  return out;
}

gate::PairedSide side_of(const core::CaseResult& r) {
  return {r.status, r.message, r.status == core::CaseStatus::ok ? gate::timing_mode(r) : ""};
}

std::string one_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// A stored A/B as the gate's input: one PairedCase per case either run has.
std::vector<gate::PairedCase> paired_cases(const core::Run& base, const core::Run& head,
                                           const std::vector<store::AbRound>& rounds) {
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
      out[it->second].rounds.push_back({r.base_ns, r.head_ns, !r.base_first});
  return out;
}

std::vector<gate::CaseVerdict> pair_verdicts(store::Database& db, const core::Run& base,
                                             const core::Run& head, const gate::Options& options) {
  return gate::compare_paired(paired_cases(base, head, db.rounds(head.pair_id)), options);
}

}  // namespace

int judge_pair(store::Database& db, const std::string& ref, const PairJudgement& j) {
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
      gate::compare_paired(paired_cases(*base, *head, rounds), j.options);
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

namespace {

gate::Options gate_options(const AbArgs& a) {
  gate::Options opts;
  if (!a.tolerance.empty()) opts.tolerance = parse_tolerance(a.tolerance);
  opts.strict = a.strict;
  if (a.batch_ms <= 0)
    throw util::InputError(util::Diagnostic{"--batch-ms", 0, 0, "must be positive"});
  if (a.max_rounds < gate::min_rounds(opts.confidence))
    throw util::InputError(
        util::Diagnostic{"--max-rounds", 0, 0,
                         fmt::format("at least {} rounds are needed for a {:.0f}% interval",
                                     gate::min_rounds(opts.confidence), opts.confidence * 100)});
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

bool knows(const worker::Described& d, const core::Case& c) {
  if (kernel::is_package(c.kernel)) return true;  // every worker runs packages
  if (c.kernel.starts_with("op:")) {
    for (const auto& p : d.plugins)
      if (std::find(p.ops.begin(), p.ops.end(), c.kernel.substr(3)) != p.ops.end()) return true;
    return false;
  }
  return std::find(d.kernels.begin(), d.kernels.end(), c.kernel) != d.kernels.end();
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

// One A/B under way: the two workers, the runs their cases are stored in, how rounds run.
struct Pair {
  worker::Supervisor &base, &head;
  store::Database& db;
  std::string id;
  core::Run base_run, head_run;
  gate::Options opts;
  ab::Options ao;

  // The workers' output between the progress lines.
  void relay(report::Progress& p) {
    for (const auto& l : base.take_stderr()) p.message("  base: " + l);
    for (const auto& l : head.take_stderr()) p.message("  head: " + l);
  }
};

// Both runs begun in the store, linked by the pair id, each with its side's environment.
void begin_runs(Pair& p, const AbArgs& a, const core::Case& first) {
  p.id = store::new_run_id();
  core::Run& head_run = p.head_run;
  a.meta.fill(head_run);
  head_run.started_ns = now_ns();
  head_run.pair_id = p.id;
  head_run.side = "head";
  head_run.env = env::fingerprint_for(p.head.described().env, first.hardware.device,
                                      first.hardware.clock_policy);
  p.base_run = head_run;
  p.base_run.side = "base";
  p.base_run.git_commit = a.base_commit;
  p.base_run.env = env::fingerprint_for(p.base.described().env, first.hardware.device,
                                        first.hardware.clock_policy);
  head_run.id = p.db.begin_run(head_run);
  p.base_run.id = p.db.begin_run(p.base_run);
  if (p.base_run.env.fingerprint() != head_run.env.fingerprint())
    fmt::print(stderr,
               "attnprof: warning: base and head describe different environments ({} vs {}): "
               "their LibTorch or CUDA versions differ; that difference is part of what is "
               "measured\n",
               p.base_run.env.fingerprint().substr(0, 12),
               head_run.env.fingerprint().substr(0, 12));
}

// One case: interleaved rounds where both sides have its kernel, else the one side alone, for
// the record. Returns its progress line.
std::string measure_case(Pair& p, const core::Case& c, const AbArgs& a) {
  const bool in_base = knows(p.base.described(), c), in_head = knows(p.head.described(), c);
  if (!in_base || !in_head) {
    worker::Supervisor& only = in_head ? p.head : p.base;
    core::CaseResult r = only.run_case(c, !a.no_trace, worker::case_timeout(c, a.case_timeout_s));
    p.db.write_case(in_head ? p.head_run.id : p.base_run.id, r);
    return fmt::format("{} only ({})", in_head ? "head" : "base", core::to_string(r.status));
  }
  ab::CaseOutcome out = ab::run_case(p.base, p.head, c, p.ao);
  p.db.write_case(p.base_run.id, out.base);
  p.db.write_case(p.head_run.id, out.head);
  p.db.write_rounds(p.id, out.rounds);
  if (out.base.status == core::CaseStatus::ok && out.head.status == core::CaseStatus::ok) {
    const auto chk =
        gate::check_stop(paired_rounds(out.rounds), gate::tolerance_for(c.gate.tolerance, p.opts),
                         gate::StopRule{static_cast<int>(out.rounds.size()), p.opts.confidence});
    return fmt::format("{:.3f}x ({} rounds, {})", chk.ratio, out.rounds.size(), out.stop_reason);
  }
  const core::CaseResult& bad = out.head.status != core::CaseStatus::ok ? out.head : out.base;
  return fmt::format("{} {}: {}", &bad == &out.head ? "head" : "base", core::to_string(bad.status),
                     one_line(bad.message));
}

// Confirmation: a worker can sit in a slow state for seconds (a thread descheduled behind
// another tenant makes every parallel region wait a time slice), long enough to fill a case's
// rounds. Pairing cannot cancel what only one process suffers, so every case the rounds did
// not settle as unchanged is measured again later, in fresh workers, and judged on all its
// rounds: a real change shows in both passes, a passing state in one.
void confirm_unsettled(Pair& p, const std::vector<core::Case>& cases) {
  std::map<std::string, int> recorded;
  for (const auto& r : p.db.rounds(p.id))
    recorded[r.case_key] = std::max(recorded[r.case_key], r.round + 1);
  std::vector<const core::Case*> again;
  const auto b = p.db.load_run(p.base_run.id), h = p.db.load_run(p.head_run.id);
  for (const auto& v : pair_verdicts(p.db, *b, *h, p.opts))
    if ((v.verdict == gate::Verdict::regression || v.verdict == gate::Verdict::improvement ||
         v.verdict == gate::Verdict::inconclusive) &&
        recorded.count(v.key))
      for (const auto& c : cases)
        if (c.key == v.key) again.push_back(&c);
  if (again.empty()) return;
  fmt::print("confirming {} case(s) in fresh workers\n", again.size());
  std::fflush(stdout);
  p.base.restart();
  p.head.restart();
  report::Progress confirm(static_cast<int>(again.size()));
  for (const core::Case* c : again) {
    confirm.start(c->key);
    ab::Options co = p.ao;
    co.first_round = recorded[c->key];
    co.trace = false;  // the first pass's cost matrices stand
    ab::CaseOutcome out = ab::run_case(p.base, p.head, *c, co);
    p.db.write_rounds(p.id, out.rounds);
    p.relay(confirm);
    confirm.finish(c->key, fmt::format("{} more rounds ({})", out.rounds.size(), out.stop_reason));
  }
}

ab::Options round_options(const AbArgs& a, const gate::Options& opts) {
  ab::Options ao;
  ao.batch_ms = a.batch_ms;
  ao.max_rounds = a.max_rounds;
  ao.budget_scale = a.budget_scale;
  ao.timeout_s = a.case_timeout_s;
  ao.trace = !a.no_trace;
  const gate::StopRule rule{a.max_rounds, opts.confidence};
  ao.decided = [opts, rule](const std::vector<store::AbRound>& rounds, const core::Case& c) {
    return gate::check_stop(paired_rounds(rounds), gate::tolerance_for(c.gate.tolerance, opts),
                            rule)
        .decided;
  };
  return ao;
}

int ab(const AbArgs& a) {
  const gate::Options opts = gate_options(a);
  const Sides s = sides(a);
  // First, before the workers start: whoever reads this log (or a gate script reading its first
  // line) knows at once that no change is being measured.
  const bool aa = same_build(s.base, s.head);
  if (aa) fmt::print("{}\n", report::kSameBuildNote);
  std::fflush(stdout);
  worker::Supervisor base(s.base), head(s.head);
  const worker::Described& bd = base.described();  // the base starts first
  const std::vector<core::Case> cases = ab_cases(a, bd, head.described());
  store::Database db = store::Database::open(a.db);
  Pair p{base, head, db, "", {}, {}, opts, round_options(a, opts)};
  begin_runs(p, a, cases.front());

  fmt::print(
      "attnprof ab: {} case(s); base {}, head {}{}\n", cases.size(), s.base.executable,
      s.head.executable,
      s.wait_policy_chosen ? "" : "; workers run with OMP_WAIT_POLICY=PASSIVE (set it to choose)");
  const auto t0 = std::chrono::steady_clock::now();
  std::fflush(stdout);
  // Each case's outcome as a line, live on a terminal; the workers' output between lines.
  report::Progress progress(static_cast<int>(cases.size()));
  for (const core::Case& c : cases) {
    progress.start(c.key);
    const std::string outcome = measure_case(p, c, a);
    p.relay(progress);
    progress.finish(c.key, outcome);
  }
  progress.done();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (a.confirm) confirm_unsettled(p, cases);
  for (core::Run* run : {&p.base_run, &p.head_run}) db.finish_run(run->id, now_ns(), run->env);

  // Judged from what was stored, the way `attnprof compare --pair` judges it again.
  PairJudgement j;
  j.options = opts;
  j.files = a.reports;
  j.accept_from_commit = a.accept_from_commit;
  j.diff_rows = a.diff_rows;
  j.same_build = aa;
  const int code = judge_pair(db, p.id, j);
  fmt::print("\nA/B pair {} stored in {} (base run {}, head run {}); {:.1f} s\n", p.id, a.db,
             p.base_run.id, p.head_run.id, wall_s);
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
  sub.add_option("--max-rounds", a->max_rounds, "Rounds per case at most")->capture_default_str();
  sub.add_option("--budget-scale", a->budget_scale,
                 "Scale each case's time budget (measure.time_budget) for its rounds")
      ->capture_default_str();
  sub.add_flag("--no-trace", a->no_trace, "Skip the traced passes (no per-op diff)");
  sub.add_flag("!--no-confirm", a->confirm,
               "Do not measure unsettled cases (regression, improvement, inconclusive) again in "
               "fresh workers before judging");
  sub.add_option("--diff-rows", a->diff_rows, "Rows of each per-op diff to print")
      ->capture_default_str();
  sub.add_option("--case-timeout", a->case_timeout_s,
                 "Seconds a worker may take for one step before it counts as hung");
  sub.add_option("--base-commit", a->base_commit, "The base side's commit, for the record");
  a->meta.add_options(sub);
  return [a] { return ab(*a); };
}

}  // namespace attnprof::cli
