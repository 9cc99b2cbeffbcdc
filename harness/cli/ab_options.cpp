// attnprof ab's options (ab_options.h): their help, and the gate and session they describe.
#include "harness/cli/ab_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "harness/cli/bounds.h"
#include "harness/cli/command.h"
#include "harness/gate/paired.h"
#include "harness/scenario/values.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

// A number of seconds, or a duration as a scenario writes it ("90s", "3min"), as seconds; its
// range is the option's bound (bounds.h), checked after.
CLI::Validator duration_seconds() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        std::strtod(s.c_str(), &end);
        if (!s.empty() && end == s.c_str() + s.size()) return "";
        const std::optional<double> d = scenario::parse_duration_s(s);
        if (!d) return fmt::format("expected seconds or a duration such as 90s or 3min, got {}", s);
        s = fmt::format("{}", *d);
        return "";
      },
      "DURATION");
}

}  // namespace

void add_ab_session_options(CLI::App& sub, AbArgs& a) {
  sub.add_option("scenarios", a.files, "Scenario files (default: the embedded smoke suite)");
  sub.add_option("--env", a.env,
                 "NAME=VALUE in both workers' environment, set before they start. "
                 "OMP_WAIT_POLICY is PASSIVE unless set here or in attnprof's environment");
  add_db_option(sub, a.db);
  sub.add_option("--case", a.case_globs, "Only cases whose key matches this glob")
      ->check(glob_check());
  sub.add_option("--shard", a.shard, "Only CI shard i of n (e.g. 2/4)");
  sub.add_option("--tolerance", a.tolerance,
                 "Tolerance for every case, e.g. 5% (default: each case's own, else 5%)");
  // A batch ends well within a worker's deadline (60 s and more); a round is two of them.
  sub.add_option("--batch-ms", a.batch_ms, "Work per side per round, in ms")
      ->capture_default_str()
      ->check(bound(Range{.lo = 0, .hi = 10'000, .above = true, .hi_why = "(10 s)"}));
  sub.add_option("--max-rounds", a.max_rounds, "Rounds per case and pair of workers at most")
      ->capture_default_str()
      ->check(bound(Range{.lo = gate::min_pair_rounds,
                          .hi = 10'000,
                          .what = "a whole number",
                          .note = "a pair of workers needs that many rounds for its own "
                                  "estimate"}));
  sub.add_option("--min-pairs", a.min_pairs,
                 "Pairs of fresh workers every case is measured by before its verdict settles")
      ->capture_default_str();
  sub.add_option("--max-pairs", a.max_pairs,
                 "Pairs of fresh workers a case is measured by at most (the stop rule ends "
                 "sooner once its interval settles against the tolerance)")
      ->capture_default_str();
  sub.add_option("--time-limit", a.time_limit_s,
                 "The whole session's time, in seconds or as a scenario writes durations (90s, "
                 "3min): no pair of workers starts that would end after it; unsettled cases say "
                 "how many more minutes they would need (0: no limit)")
      ->transform(duration_seconds())
      ->capture_default_str()
      ->check(bound(Range{.hi = 7 * 86400, .what = "a number of seconds", .hi_why = "(a week)"}));
  sub.add_flag("!--no-layout-padding", a.layout_pad,
               "Start the workers without a random-length environment variable (it moves their "
               "initial stack, a layout bias each pair of workers then has its own draw of)");
  sub.add_flag("!--no-shared-cpus", a.share_cpus,
               "Leave each worker's CPUs and threads to the scheduler; by default both workers "
               "of a pair run a CPU case with fewer threads than CPUs on the same CPUs, and bind "
               "their intra-op thread i to the same i-th CPU, in an order drawn per pair (not "
               "where OMP_PROC_BIND or OMP_PLACES is set)");
  sub.add_option("--budget-scale", a.budget_scale,
                 "Scale each case's time budget (measure.time_budget) for its rounds")
      ->capture_default_str()
      ->check(bound(Range{.lo = 0, .hi = 100, .above = true}));
  sub.add_flag("--no-trace", a.no_trace, "Skip the traced passes (no per-op diff)");
  sub.add_option("--diff-rows", a.diff_rows, "Rows of each per-op diff to print")
      ->capture_default_str();
  sub.add_option("--case-timeout", a.case_timeout_s,
                 "Seconds a worker may take for one step before it counts as hung")
      ->check(case_timeout_bound());
}

void add_ab_options(CLI::App& sub, AbArgs& a) {
  sub.add_option("--base", a.base,
                 "The base side: an attnprof-worker executable, or the build folder holding one "
                 "(e.g. the merge base's build; default: the worker beside this attnprof, for "
                 "two plugins or settings with --base-arg and --head-arg)");
  sub.add_option("--head", a.head,
                 "The head side, likewise (default: the worker beside this attnprof)");
  sub.add_option("--base-arg", a.base_args,
                 "An argument for the base worker, e.g. --base-arg=--threads=1 or "
                 "--base-arg=--plugin=old.so");
  sub.add_option("--head-arg", a.head_args, "An argument for the head worker");
  add_ab_session_options(sub, a);
  sub.add_flag("--strict", a.strict, "Fail on inconclusive verdicts too");
  sub.add_flag("--accept-from-commit-message", a.accept_from_commit,
               "Accept regressions named by `Perf-Accept: <glob> <reason>` trailers of the "
               "commit(s) under test (git log)");
  add_report_options(sub, a.reports);
  add_finding_options(sub, a.findings);
  sub.add_flag("!--no-confirm", a.confirm,
               "One pair of workers per case (--max-pairs 1): a quick look, and every measured "
               "case inconclusive, since no verdict rests on one pair");
  sub.add_option("--base-commit", a.base_commit, "The base side's commit, for the record");
  a.meta.add_options(sub);
}

gate::Options gate_options(const AbArgs& a) {
  gate::Options opts;
  if (!a.tolerance.empty()) opts.tolerance = parse_tolerance(a.tolerance);
  opts.strict = a.strict;
  opts.findings = a.findings;
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
  so.share_cpus = a.share_cpus;
  return so;
}

}  // namespace attnprof::cli
