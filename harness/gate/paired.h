// Judging an A/B (`attnprof ab`): the base and head builds measure the same case in interleaved
// rounds, in randomized order, each side taking a short batch of samples per round, so both
// sides see the same machine state. On a shared machine a case's median moves by tens of percent
// between runs; within one round both sides move together, so the per-round log ratio
//   d_r = log(head_r / base_r)        (each side's batch median in round r)
// is free of that drift, and the rounds are the unit of analysis:
//   effect    exp(HL(d)), the one-sample Hodges-Lehmann estimate (median of Walsh averages)
//   interval  exp of the signed-rank interval at Options::confidence (99%): exact below 50
//             rounds, normal beyond (stats/hodges_lehmann.h)
//   evidence  the Wilcoxon signed-rank test of d (two-sided), Benjamini-Hochberg adjusted across
//             the comparison's cases
//   verdict   the rule of compare.h (decide()): regression only when the whole interval is
//             beyond 1 + tolerance and the adjusted p < alpha, improvement likewise below
//             1 - tolerance, unchanged inside [1 - tol, 1 + tol], inconclusive otherwise;
//             method "paired". Returned as CaseVerdicts, so annotations, Perf-Accept trailers,
//             reports and gate::exit_code() work on them unchanged.
// Rank-based throughout: a round disturbed by a preemption moves one rank, not the estimate.
// Which side went first does not enter the estimate; the randomized order is what makes an
// advantage of going first (or second) noise rather than bias. When the rounds show such an
// order effect anyway, the reason says so.
//
// Sequential stopping (for the driver, after each round): check_stop() looks only at the
// round counts of look_schedule(): 12, 16, 24, 32, 48, 64, 96, 128, ... and the driver's
// maximum. Why:
//   - A fixed, sparse schedule: checking after every round and stopping at the first interval
//     that happens to clear the band inflates false verdicts with every look. Counts growing by
//     x1.5 to x1.33 keep the looks few (8 up to 128 rounds) while each look has meaningfully
//     more data than the last (an interval narrows as 1/sqrt(rounds)).
//   - Bonferroni across the looks: each look's interval is at 1 - (1 - confidence) / L for the L
//     looks up to the maximum, so all of them cover the true ratio together with probability at
//     least `confidence`, whatever the data; stopping at the first decided look then errs no
//     more often than that. Simpler and assumption-free beside alpha-spending boundaries, at
//     the price of wider interim intervals.
//   - Decided means the look's interval lies wholly inside [1 - tol, 1 + tol] or wholly beyond
//     it on one side: exactly the cases where more rounds cannot change the verdict's direction.
//     The final verdict, compare_paired() at 99%, uses a narrower interval nested inside the
//     look's, so it agrees with the stop (a regression still needs its adjusted p).
//   - First look at 12 rounds: the fewest for which an exact signed-rank interval reaches the
//     per-look level (with 8 looks, 1 - 0.01/8 needs 2^(1-n) <= 0.00125, so n >= 11). Below
//     min_rounds(confidence) (8 at 99%) compare_paired() does not decide at all: no interval of
//     that coverage exists.
//   - Running out of rounds undecided, the driver stops at max_rounds; the 99% verdict there is
//     one more look, so a case that reaches it has at most 1 - confidence more error.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/gate/compare.h"

namespace attnprof::gate {

// One round of an A/B: each side's batch median, and which side ran first.
struct PairedRound {
  double base_ns = 0;
  double head_ns = 0;
  bool head_first = false;
};

// One side's outcome for a case.
struct PairedSide {
  core::CaseStatus status = core::CaseStatus::ok;
  std::string message;  // why it failed, errored or was skipped
  std::string timing;   // timing_mode() of the side's case; empty: unknown (matches any)
};

struct PairedCase {
  std::string key;
  double tolerance = 0;  // the case's gate.tolerance; <= 0: Options::default_tolerance
  std::optional<PairedSide> base, head;  // nullopt: that build does not have the case
  std::vector<PairedRound> rounds;       // rounds with a non-positive time are left out
};

// One verdict per case in input order, except cases skipped on both sides (or skipped on one
// and absent on the other), which get none:
//   head failed or errored                      failed (with its message)
//   base ok, head absent or skipped             missing
//   head ok, base absent, skipped or failed     new
//   both ok, timing modes differ                inconclusive ("timed as ... in base ...")
//   both ok, fewer than min_rounds rounds       inconclusive
//   both ok                                     the paired verdict above
// Options: tolerance, default_tolerance, alpha, confidence as in compare(); the rest is unused
// here (exit_code() reads strict and missing_fails).
std::vector<CaseVerdict> compare_paired(std::span<const PairedCase> cases,
                                        const Options& options = {});

// The fewest rounds for which an exact signed-rank interval reaches `level`: the smallest n with
// 1 - 2^(1-n) >= level (8 at 99%).
int min_rounds(double level);

// The round counts at which check_stop() looks, ascending, ending with max_rounds.
std::vector<int> look_schedule(int max_rounds, double confidence = 0.99);

struct StopRule {
  int max_rounds = 128;      // the driver's cap; the last look
  double confidence = 0.99;  // simultaneous over all looks
};

struct StopCheck {
  bool look = false;     // this round count is on the schedule
  bool decided = false;  // stop now: the interval settles the verdict, or max_rounds is reached
  int next_look = 0;     // the next scheduled round count; 0 when this is the last
  double level = 0;      // the per-look interval level
  double ratio = 0, ci_low = 0, ci_high = 0;  // at a look; NaN otherwise
  std::string reason;  // at a look: "16 rounds: 1.004x (99.88% CI 0.991-1.017) inside +-2.0%"
};

// After each round: whether the driver may stop measuring this case.
StopCheck check_stop(std::span<const PairedRound> rounds, double tolerance,
                     const StopRule& rule = {});

}  // namespace attnprof::gate
