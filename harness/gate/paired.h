// Judging an A/B (`attnprof ab`): the base and head builds measure the same case in interleaved
// rounds, in randomized order, each side taking a short batch of samples per round, so both
// sides see the same machine state. On a shared machine a case's median moves by tens of percent
// between runs; within one round both sides move together, so the per-round log ratio
//   d = log(head / base)        (each side's batch of that round: its lower quartile)
// is free of that drift. The lower quartile, not the median: on a busy machine a batch holds
// calls that ran alone and calls that shared a CPU with another job (which only add time), and
// its median flips between the two from round to round; the lower quartile stays with the calls
// that ran alone while there are a quarter of them, and on a quiet machine it is nearly as
// steady as the median (the fastest call alone is not: it is one extreme draw). Replayed on the
// same stored batches (docs/statistics.md), it settled planted slowdowns in fewer pairs than the
// median under load and as fast as it on a quieter machine. Rounds stored before schema v11 have
// no lower quartile and are judged on their medians. What pairing cannot cancel is what one process
// carries for its whole life: its heap and code layout, its pages' placement, the core it landed
// on. Every round of one pair of workers shares that bias, and no statistic over those rounds can
// see it (30 A/A sessions here: the 99% interval over rounds covered 1.0 in 78% of verdicts with a
// plugin, 94% with built-in kernels). So a case is measured by several pairs of fresh workers, and
// the statistic has two levels (docs/statistics.md):
//   within a pair   m_j = HL(d of pair j), the one-sample Hodges-Lehmann estimate (robust to a
//                   preempted round), and v_j its variance, from the signed-rank interval's
//                   width; pairs with fewer than min_pair_rounds rounds are left out
//   across pairs    m_j = mu + b_j + e_j, b_j ~ N(0, tau^2) the pair's bias, e_j ~ N(0, v_j):
//                   a random-effects mean. tau^2 by DerSimonian-Laird, weights 1/(v_j + tau^2),
//                   and the interval mu +- t(P-1) * se with the modified Hartung-Knapp
//                   standard error (its scale factor at least 1): with P pairs the interval is
//                   a Student-t one with P - 1 degrees of freedom, never narrower than the
//                   rounds alone imply. A bias that lives in one pair widens the interval
//                   instead of deciding the verdict.
//   effect          exp(mu); interval exp(mu +- ...) at Options::confidence (99%)
//   evidence        the t-test of mu = 0 (P - 1 df), Benjamini-Hochberg adjusted across cases
//   verdict         the rule of compare.h (decide()): regression only when the whole interval
//                   is beyond 1 + tolerance and the adjusted p < alpha, improvement likewise
//                   below 1 - tolerance, unchanged inside [1 - tol, 1 + tol], inconclusive
//                   otherwise; method "paired". Rounds of one pair only: inconclusive (one
//                   pair cannot show its own bias).
// What used to be a "stretch" rule (a change claimed only if it held in every stretch of
// rounds) is gone: a slow stretch of one side is a bias of that pair, and the model widens the
// interval by it, on an A/A and on a real change alike; the stretch rule fired on real
// regressions and never on an A/A. Which side went first does not enter the estimate; the
// randomized order is what makes an advantage of going first noise rather than bias. When the
// rounds show such an order effect anyway, the reason says so.
//
// Sequential stopping (for the session, after each pair of workers): check_stop() looks at
// pair counts min_pairs, min_pairs + 1, ..., max_pairs. Each look's interval is at
// 1 - (1 - confidence) / L for the L looks (Bonferroni), so all of them cover the true ratio
// together with probability at least `confidence`; stopping at the first decided look errs no
// more often than that. Decided means the look's interval lies wholly inside [1 - tol, 1 + tol]
// or wholly beyond it on one side. The final verdict, compare_paired() at 99%, uses a narrower
// interval nested inside the look's, so it agrees with the stop. The stop rule and the verdict
// are the same statistic; there is no separate confirmation: every verdict, `unchanged`
// included, rests on at least min_pairs pairs where the budget allows.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/gate/compare.h"
#include "harness/stats/interval.h"

namespace attnprof::gate {

// One side's outcome for a case.
struct PairedSide {
  core::CaseStatus status = core::CaseStatus::ok;
  std::string message;    // why it failed, errored or was skipped
  std::string timing;     // timing_mode() of the side's case; empty: unknown (matches any)
  std::string reference;  // what its output was checked against (CaseVerdict::reference)
  Traits traits;          // what it ran and how accurate it was (findings.h)
};

struct PairedCase {
  std::string key;
  double tolerance = 0;  // the case's gate.tolerance; <= 0: Options::default_tolerance
  core::DType dtype = core::DType::fp32;  // what its accuracy finding is judged at
  std::optional<PairedSide> base, head;   // nullopt: that build does not have the case
  std::vector<core::AbRound> rounds;      // rounds with a non-positive time are left out
  // Seconds one more pair of workers costs this case (its prepare, rounds and finish, and its
  // share of the workers' start); 0: unknown. An inconclusive reason then says how many more
  // minutes a verdict would take.
  double pair_seconds = 0;
};

// Fewer rounds than this, and a pair of workers is left out: its own estimate and spread need
// a few rounds.
inline constexpr int min_pair_rounds = 5;

// The two-level estimate of a case's log ratio (rounds within pairs of workers, pairs within
// the case).
struct TwoLevel {
  bool q1 = false;    // judged on each batch's lower quartile (else on batch medians)
  int pairs = 0;      // pairs of workers with at least min_pair_rounds rounds
  int rounds = 0;     // their rounds
  int left_out = 0;   // pairs with fewer rounds
  double shift = 0;   // mu, the log ratio
  double se = 0;      // its standard error (modified Hartung-Knapp); NaN below 2 pairs
  double tau = 0;     // the between-pair sd of the log ratio (DerSimonian-Laird)
  double within = 0;  // the typical (root mean square) sd of one pair's own estimate
  double pair_low = 0, pair_high = 0;  // the lowest and highest pair estimate (log)
  // Each pair's own estimate, in pass order, for whatever draws the two levels (the A/B page):
  // the pairs left out for too few rounds are not among them.
  struct Pair {
    int pass = 0, rounds = 0;
    double shift = 0, se = 0;  // the pair's log ratio (Hodges-Lehmann) and its standard error
  };
  std::vector<Pair> per_pair;
  // shift +- t(pairs - 1) * se; NaN bounds below 2 pairs.
  stats::Interval interval(double level) const;
  double p_two_sided() const;  // the t-test of shift = 0; 1 below 2 pairs
};
TwoLevel two_level(std::span<const core::AbRound> rounds);

// Which of a round's two times per side the statistic judges: each batch's lower quartile where
// every usable round of the case recorded it (attnprof ab since schema v11), else each batch's
// median. judged() returns the rounds with base_ns and head_ns holding the judged times, for
// whatever shows the rounds (the A/B rounds chart, the JSON report).
bool judged_on_q1(std::span<const core::AbRound> rounds);
std::vector<core::AbRound> judged(std::span<const core::AbRound> rounds);

// How many pairs in all an interval at `level` would need to settle against `tolerance` if the
// pairs went on as they have (the same estimate and spread per pair): t.pairs or fewer when it
// settles now; -1 when no count up to 200 would (an effect right at the tolerance).
int pairs_needed(const TwoLevel& t, double tolerance, double level);

// One verdict per case in input order, except cases skipped on both sides (or skipped on one
// and absent on the other), which get none:
//   head failed or errored                      failed (with its message)
//   base ok, head absent or skipped             missing
//   head ok, base absent, skipped or failed     new
//   both ok, timing modes differ                inconclusive ("timed as ... in base ...")
//   both ok, fewer than 2 pairs of workers      inconclusive
//   both ok                                     the paired verdict above
// and, where both sides are ok, the findings beside it (findings.h: kernels, accuracy).
// Options: tolerance, default_tolerance, alpha, confidence as in compare(); the rest is unused
// here (exit_code() reads strict and missing_fails).
std::vector<CaseVerdict> compare_paired(std::span<const PairedCase> cases,
                                        const Options& options = {});

// The fewest rounds for which an exact signed-rank interval reaches `level`: the smallest n with
// 1 - 2^(1-n) >= level (8 at 99%).
int min_rounds(double level);

struct StopRule {
  int max_pairs = 12;        // the last look
  double confidence = 0.99;  // simultaneous over all looks
  int min_pairs = 3;         // no verdict is settled on fewer pairs of workers
};

// The per-look level: 1 - (1 - confidence) / (max_pairs - min_pairs + 1).
double look_level(const StopRule& rule);

struct StopCheck {
  bool look = false;     // this pair count is a look (min_pairs..max_pairs)
  bool decided = false;  // stop now: the interval settles the verdict, or max_pairs is reached
  int pairs = 0;         // pairs of workers counted
  double level = 0;      // the per-look interval level
  double ratio = 0, ci_low = 0, ci_high = 0;  // at a look; NaN otherwise
  int pairs_needed = 0;  // at an undecided look: pairs_needed() at the look level (-1: many)
  std::string reason;    // at a look: "4 pairs: 1.004x (99.83% CI 0.991-1.017) inside +-2.0%"
};

// After each pair of workers, on every round of the case so far: whether the session may stop
// measuring this case.
StopCheck check_stop(std::span<const core::AbRound> rounds, double tolerance,
                     const StopRule& rule = {});

}  // namespace attnprof::gate
