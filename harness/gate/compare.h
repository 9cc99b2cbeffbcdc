// Verdicts per case against a baseline, and the exit code that gates a merge.
//
// The decision is equivalence testing on an effect size, not a bare p-value:
//   effect    ratio = median(candidate) / median(baseline), with a CI at `confidence` (99%):
//             a seeded percentile bootstrap when both sides have samples; otherwise the two
//             summaries' median CIs combined by interval arithmetic, each widened from its
//             recorded level to `confidence` (conservative: wider than a joint interval).
//   evidence  two-sided Mann-Whitney U on the samples, Benjamini-Hochberg adjusted across
//             every case of the comparison (many cases, one gate: the false-discovery rate,
//             not each case's alpha, is what a CI job lives with).
//   verdict   regression   CI low  > 1 + tol  and  p_adj < alpha
//             improvement  CI high < 1 - tol  and  p_adj < alpha
//             unchanged    1 - tol <= CI low and CI high <= 1 + tol
//             inconclusive anything else: the data cannot tell a change of tol from none (too
//                          noisy, too few samples, or a true change near the tolerance)
//   Without samples on both sides there is no rank test: the (conservative) CI decides alone.
//   History baselines (run medians of k >= 2 earlier runs, history_baseline.h) use the run as
//   the unit instead: d = log(run median) - mean(log run medians), with a Student-t interval
//   d +- t(k-1) * s * sqrt(1 + 1/k), s = the sd of the log run medians (at least this run's
//   own standard error), and the matching t-test for p. Run-to-run drift, which samples of a
//   single run cannot show, is then part of the interval. Baseline files written from several
//   runs (`baseline update --runs 3`) carry the same run medians and are judged the same way
//   (method "runs"); a file from one run cannot know the run-to-run noise, and every reason
//   says so, because on a shared machine that noise can be far larger than the within-run
//   interval (medians moving by tens of percent between runs whose own 99% intervals are +-2%).
// What an inconclusive reason suggests is what would narrow the interval: more samples where
// the within-run interval is what is wide, never where the run-to-run spread is.
// A case timed differently here than in the baseline (timing_mode.h) is inconclusive with
// that reason: the two numbers are not the same quantity.
// An unstable case (core/stability.h: the samples a busy machine descheduled moved its median
// beyond its interval) is inconclusive, its reason saying what it would have been and why not: its
// samples come from two machine states, so an interval over them (a bootstrap or a median CI, each
// of which assumes one distribution) can be +-0.3% around a figure that is the load's, not the
// code's. The interval is kept, marked by CaseVerdict::unstable, for the record.
// A case whose correctness check failed is `failed` whatever its timing; baseline cases the
// run lacks are `missing`, run cases the baseline lacks `new_case`. Baselines from a different
// environment fingerprint give `inconclusive` unless allowed: never compare across machines.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/gate/baseline.h"
#include "harness/gate/findings.h"

namespace attnprof::gate {

// The value of a ratio, bound or p-value that could not be computed (no samples, no baseline).
inline constexpr double no_value = std::numeric_limits<double>::quiet_NaN();

// accepted and ignored come from annotations (annotations.h), never from compare() itself:
// a regression or missing case someone accepted for this run, a case excluded from gating.
// Neither fails the gate.
enum class Verdict {
  regression,
  improvement,
  unchanged,
  inconclusive,
  new_case,
  missing,
  failed,
  accepted,
  ignored
};
const char* to_string(Verdict);  // "regression", ..., "new", "missing", "failed", "accepted", ...

// Verdicts that fail the gate as they stand (inconclusive only with Options::strict).
bool fails_gate(Verdict, bool strict, bool missing_fails);

enum class Effect {
  median_ratio,    // ratio of medians, bootstrap CI (default)
  hodges_lehmann,  // exp(Hodges-Lehmann shift of log times), Moses CI: uses every pair
};

struct CaseVerdict {
  std::string key;           // the run's case key (the baseline's key for `missing`)
  std::string baseline_key;  // the key matched in the baseline (an alias, maybe); empty if none
  Verdict verdict = Verdict::inconclusive;
  double ratio = 0;  // candidate / baseline; NaN when not compared
  double ci_low = 0, ci_high = 0;
  double p_value = 0, p_adjusted = 0;  // NaN when there was no rank test
  double tolerance = 0;
  // "bootstrap", "hodges-lehmann", "summary", "history", "runs" (a baseline file of several
  // runs), "paired" (paired.h); empty if not compared
  std::string method;
  double baseline_median_ns = 0, candidate_median_ns = 0;
  int baseline_n = 0, candidate_n = 0;
  std::string reason;  // one line a person can act on
  // Why the run's case is unstable ("unstable: descheduled in 38% of samples; load 4.1 on 2
  // cores"), or empty: then its interval is not a verdict's (see above).
  std::string unstable;
  // What the run's case was checked against before it was timed (core::CaseResult::reference):
  // "none" means not checked, which its reason then says (core::kNotChecked); empty when the
  // case is not in the run or ended before its check.
  std::string reference;
  // Beside the time verdict (findings.h): a changed kernel set, a less accurate output. Judged
  // for cases in both the run and the baseline that completed on both.
  Findings findings;
};

// Ends an ok case's reason with core::kNotChecked when its output was not checked: every report
// that shows reasons then says so. compare() and compare_paired() call it.
void mark_unchecked(CaseVerdict& v);

struct Options {
  double default_tolerance = 0.05;  // for cases whose gate.tolerance is not positive
  std::optional<double> tolerance;  // overrides every case's tolerance (--tolerance)
  double alpha = 0.01;              // on BH-adjusted p-values
  double confidence = 0.99;         // level of the ratio's CI
  int resamples = 10000;
  std::uint64_t seed = 0x6174746e70726f66ull;  // mixed with the case key: per-case streams
  Effect effect = Effect::median_ratio;
  bool strict = false;        // inconclusive fails the gate
  bool missing_fails = true;  // a baseline case absent from the run fails the gate
  bool allow_fingerprint_mismatch = false;
  FindingRules findings;  // kernels and accuracy (findings.h)
};

// The tolerance a case is judged at: Options::tolerance (--tolerance) over the case's own
// gate.tolerance, over Options::default_tolerance when the case sets none.
double tolerance_for(double case_tolerance, const Options& options);

// Verdicts in the run's case order, then the missing cases in key order. Skipped run cases
// that are in the baseline are `missing` (with the skip's reason); skipped cases the baseline
// lacks get no verdict.
std::vector<CaseVerdict> compare(const Baseline& baseline, const core::Run& run,
                                 const Options& options = {});

// Whether a comparison had anything to compare against, with a warning a person must see when
// not: the baseline is from another environment (naming both fingerprints), or no case of the
// run has a baseline entry (nothing in history for this environment, say). `compare
// --require-baseline` fails the gate when !comparable. A baseline without a fingerprint stays
// comparable, with a warning that it cannot be checked.
struct BaselineCheck {
  bool comparable = true;
  std::string warning;  // empty when there is nothing to say
};
BaselineCheck check_baseline(const Baseline& baseline, const core::Run& run,
                             const std::vector<CaseVerdict>& verdicts, const Options& options = {});

// The verdict rule of the header comment, shared by compare() and compare_paired(): sets
// v.verdict and v.reason from v.ratio, v.ci_low, v.ci_high (finite), v.p_adjusted (NaN: no rank
// test) and v.tolerance. `basis` says what the interval rests on ("bootstrap n=400/380",
// "paired, 48 rounds"), `straddles` what would narrow an interval that straddles the tolerance
// ("more samples would tell"), and `note`, when not empty, ends every reason.
void decide(CaseVerdict& v, const Options& options, const std::string& basis,
            const std::string& straddles, const std::string& note = "");

// util::exit_gate_failed (1) on a regression, a failed case, a missing case (missing_fails),
// an inconclusive one (strict), or a finding that fails the gate (Finding::fails: asked for by
// FindingRules); util::exit_pass (0) otherwise.
int exit_code(const std::vector<CaseVerdict>& verdicts, const Options& options = {});

}  // namespace attnprof::gate
