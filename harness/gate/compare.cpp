// The gate's verdicts and exit code (compare.h): each case's effect size and evidence against
// its baseline, committed file or history, decided against the case's tolerance.
#include "harness/gate/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "harness/core/hash.h"
#include "harness/core/stability.h"
#include "harness/gate/timing_mode.h"
#include "harness/stats/benjamini_hochberg.h"
#include "harness/stats/bootstrap.h"
#include "harness/stats/distributions.h"
#include "harness/stats/hodges_lehmann.h"
#include "harness/stats/mann_whitney.h"
#include "harness/stats/student_t.h"
#include "harness/stats/summary.h"
#include "harness/util/error.h"

namespace attnprof::gate {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::regression:
      return "regression";
    case Verdict::improvement:
      return "improvement";
    case Verdict::unchanged:
      return "unchanged";
    case Verdict::inconclusive:
      return "inconclusive";
    case Verdict::new_case:
      return "new";
    case Verdict::missing:
      return "missing";
    case Verdict::failed:
      return "failed";
    case Verdict::accepted:
      return "accepted";
    case Verdict::ignored:
      return "ignored";
  }
  return "?";
}

bool fails_gate(Verdict v, bool strict, bool missing_fails) {
  switch (v) {
    case Verdict::regression:
    case Verdict::failed:
      return true;
    case Verdict::missing:
      return missing_fails;
    case Verdict::inconclusive:
      return strict;
    default:
      return false;
  }
}

namespace {

// A median with a CI at some level, from whichever side: the run or the baseline.
struct Center {
  double median = 0, low = 0, high = 0, level = 0.95;
  int n = 0;
};

// Widens an interval recorded at `from` coverage to `to`, assuming normal-shaped tails.
Center widened(Center c, double to) {
  const double k =
      stats::normal_quantile(1 - (1 - to) / 2) / stats::normal_quantile(1 - (1 - c.level) / 2);
  c.low = c.median - k * (c.median - c.low);
  c.high = c.median + k * (c.high - c.median);
  return c;
}

// From a baseline entry without samples: its recorded CI, else McGill's notch from the IQR.
std::optional<Center> center_of(const BaselineCase& b) {
  Center c{b.median_ns, b.ci_low_ns, b.ci_high_ns, 0.95, b.n};
  if (c.low > 0 && c.high > 0) return c;
  if (b.q1_ns > 0 && b.q3_ns > 0 && b.n > 0) {
    const double half = 1.58 * (b.q3_ns - b.q1_ns) / std::sqrt(static_cast<double>(b.n));
    c.low = c.median - half;
    c.high = c.median + half;
    return c;
  }
  return std::nullopt;
}

double tolerance_of(const core::Case& c, const Options& o) {
  return tolerance_for(c.gate.tolerance, o);
}

// What a verdict's interval rests on and what would narrow it (compare.h: decide()).
struct Basis {
  std::string basis, straddles, note;
};

constexpr const char* more_samples = "more samples would tell";

// The run's median against the medians of k earlier runs (see compare.h). The unit is the run:
// the gate's A/A calibration found run-to-run drift to be the main cause of false alarms, and
// within-run samples, however many, say nothing about it.
Basis history_effect(CaseVerdict& v, const core::CaseResult& cr, const std::vector<double>& cand,
                     const BaselineCase& b, bool from_history, const Options& o) {
  core::Summary s = cand.empty() ? cr.summary : stats::summarize(cand);
  const double level = s.ci_level > 0 && s.ci_level < 1 ? s.ci_level : 0.95;
  const auto k = static_cast<double>(b.run_medians_ns.size());
  double mean = 0, var = 0;
  for (double m : b.run_medians_ns) mean += std::log(m) / k;
  for (double m : b.run_medians_ns) var += (std::log(m) - mean) * (std::log(m) - mean) / (k - 1);
  // A history of identical medians (a coarse clock) must not make every change significant:
  // the spread is at least this run's own standard error of log(median).
  const double between_runs = std::sqrt(var);
  double own = 0;
  if (s.ci_low_ns > 0 && s.ci_high_ns > s.ci_low_ns)
    own = (std::log(s.ci_high_ns) - std::log(s.ci_low_ns)) /
          (2 * stats::normal_quantile(1 - (1 - level) / 2));
  const double spread = std::max(between_runs, own);
  v.method = from_history ? "history" : "runs";
  v.baseline_median_ns = std::exp(mean);  // the geometric mean: the center the ratio is against
  v.baseline_n = static_cast<int>(k);
  v.candidate_median_ns = s.median_ns;
  v.candidate_n = s.n;
  Basis basis{fmt::format("{} of {} runs, n={}", from_history ? "history" : "baseline",
                          v.baseline_n, v.candidate_n),
              more_samples, ""};
  // More samples narrow only this run's own error; when the runs' spread is the larger part
  // they cannot tell, and saying so saves a pointless rerun.
  if (between_runs >= own)
    basis.straddles = fmt::format(
        "the run-to-run spread ({:.1f}% over {} runs) is what is wide, so more samples would not "
        "tell; measure base and head side by side (attnprof ab)",
        (std::exp(between_runs) - 1) * 100, v.baseline_n);
  if (!(s.median_ns > 0)) return basis;  // ratio and CI stay NaN: inconclusive
  const double d = std::log(s.median_ns) - mean;
  const double scale = spread * std::sqrt(1 + 1 / k);
  const double half = stats::student_t_quantile(1 - (1 - o.confidence) / 2, k - 1) * scale;
  v.ratio = std::exp(d);
  v.ci_low = std::exp(d - half);
  v.ci_high = std::exp(d + half);
  v.p_value =
      scale > 0 ? 2 * (1 - stats::student_t_cdf(std::fabs(d) / scale, k - 1)) : (d == 0 ? 1 : 0);
  return basis;
}

// Effect and test for one case that is in both the run and the baseline.
Basis measure_effect(CaseVerdict& v, const core::CaseResult& cr, const BaselineCase& b,
                     bool from_history, const Options& o) {
  std::vector<double> cand = core::kept_ns(cr.samples);
  v.baseline_median_ns = b.median_ns;
  v.baseline_n = b.n;
  v.p_value = v.p_adjusted = no_value;
  if (b.run_medians_ns.size() >= 2) {
    Basis basis = history_effect(v, cr, cand, b, from_history, o);
    basis.note = b.remark;
    return basis;
  }
  Basis basis{"", more_samples,
              "run-to-run noise unknown: the baseline records one run (`attnprof baseline update "
              "--runs 3` records the spread)"};
  // Below six samples a side, no interval of the median reaches 95% coverage, and a bootstrap
  // of so few values is far narrower than the truth: too few to decide anything.
  constexpr std::size_t kMinSamples = 6;
  if ((!cand.empty() && cand.size() < kMinSamples) ||
      (!b.samples_ns.empty() && b.samples_ns.size() < kMinSamples)) {
    v.method = "too few samples";
    v.candidate_median_ns = stats::summarize(cand).median_ns;
    v.candidate_n = static_cast<int>(cand.size());
    v.baseline_n = static_cast<int>(b.samples_ns.size());
    v.ratio = v.candidate_median_ns > 0 && b.median_ns > 0 ? v.candidate_median_ns / b.median_ns
                                                           : no_value;
    v.ci_low = v.ci_high = no_value;
    return basis;
  }
  if (cand.size() >= kMinSamples && b.samples_ns.size() >= kMinSamples) {
    v.candidate_median_ns = stats::summarize(cand).median_ns;
    v.candidate_n = static_cast<int>(cand.size());
    v.baseline_n = static_cast<int>(b.samples_ns.size());  // what the tests actually see
    if (o.effect == Effect::hodges_lehmann) {
      auto est = stats::hodges_lehmann_ratio(b.samples_ns, cand, o.confidence);
      v.method = "hodges-lehmann";
      v.ratio = est.shift;
      v.ci_low = est.ci.low;
      v.ci_high = est.ci.high;
    } else {
      auto est = stats::bootstrap_median_ratio(
          b.samples_ns, cand, {o.resamples, o.confidence, o.seed ^ core::fnv1a64(v.key)});
      v.method = "bootstrap";
      v.ratio = est.ratio;
      v.ci_low = est.ci.low;
      v.ci_high = est.ci.high;
    }
    v.p_value = stats::mann_whitney(b.samples_ns, cand).p_two_sided;
    basis.basis = fmt::format("{} n={}/{}", v.method, v.baseline_n, v.candidate_n);
    return basis;
  }
  // Summaries only. The run's side: from its samples if it has any, else its summary.
  Center c;
  if (!cand.empty()) {
    core::Summary s = stats::summarize(cand);
    c = {s.median_ns, s.ci_low_ns, s.ci_high_ns, s.ci_level, s.n};
  } else {
    const core::Summary& s = cr.summary;
    c = {s.median_ns, s.ci_low_ns, s.ci_high_ns, s.ci_level > 0 ? s.ci_level : 0.95, s.n};
  }
  v.candidate_median_ns = c.median;
  v.candidate_n = c.n;
  auto base = center_of(b);
  if (!base || c.median <= 0 || c.low <= 0 || c.high <= 0) {
    // No spread known on one side (or a level we cannot widen from): not comparable.
    v.method = "summary";
    v.ratio = c.median > 0 ? c.median / b.median_ns : no_value;
    v.ci_low = v.ci_high = no_value;
    return basis;
  }
  Center wc = widened(c, o.confidence), wb = widened(*base, o.confidence);
  v.method = "summary";
  v.ratio = c.median / b.median_ns;
  v.ci_low = wb.high > 0 ? wc.low / wb.high : no_value;
  v.ci_high = wb.low > 0 ? wc.high / wb.low : std::numeric_limits<double>::infinity();
  basis.basis = fmt::format("{} n={}/{}", v.method, v.baseline_n, v.candidate_n);
  return basis;
}

// No interval to judge: too few samples, or no spread on one side.
void untestable(CaseVerdict& v) {
  v.verdict = Verdict::inconclusive;
  v.reason = v.method == "too few samples"
                 ? fmt::format(
                       "too few samples to test (n={}/{}, at least 6 a side; median "
                       "ratio {:.3f}x)",
                       v.baseline_n, v.candidate_n, v.ratio)
                 : fmt::format(
                       "no spread recorded for one side (median ratio {:.3f}x); "
                       "cannot test",
                       v.ratio);
}

}  // namespace

void decide(CaseVerdict& v, const Options& o, const std::string& basis,
            const std::string& straddles, const std::string& note) {
  const double tol = v.tolerance;
  const std::string ci = fmt::format("{:.3f}x ({:.0f}% CI {:.3f}-{:.3f}, {})", v.ratio,
                                     o.confidence * 100, v.ci_low, v.ci_high, basis);
  const bool significant = std::isnan(v.p_adjusted) || v.p_adjusted < o.alpha;
  const std::string p = std::isnan(v.p_adjusted) ? ""
                        : v.p_adjusted < 1e-300  ? "; adjusted p < 1e-300"
                                                 : fmt::format("; adjusted p {:.2g}", v.p_adjusted);
  if (v.ci_low > 1 + tol || v.ci_high < 1 - tol) {
    const bool slower = v.ci_low > 1 + tol;
    if (significant) {
      v.verdict = slower ? Verdict::regression : Verdict::improvement;
      v.reason = fmt::format("{}: {} beyond the {:.1f}% tolerance{}", ci,
                             slower ? "slower" : "faster", tol * 100, p);
    } else {
      v.verdict = Verdict::inconclusive;
      v.reason = fmt::format("{}: beyond the {:.1f}% tolerance but not significant{} >= {}", ci,
                             tol * 100, p, o.alpha);
    }
  } else if (v.ci_low >= 1 - tol && v.ci_high <= 1 + tol) {
    v.verdict = Verdict::unchanged;
    v.reason = fmt::format("{}: within +-{:.1f}%", ci, tol * 100);
  } else {
    v.verdict = Verdict::inconclusive;
    v.reason = fmt::format("{}: straddles the +-{:.1f}% tolerance; {}", ci, tol * 100, straddles);
  }
  if (!note.empty()) v.reason += "; " + note;
}

double tolerance_for(double case_tolerance, const Options& o) {
  if (o.tolerance) return *o.tolerance;
  return case_tolerance > 0 ? case_tolerance : o.default_tolerance;
}

std::vector<CaseVerdict> compare(const Baseline& baseline, const core::Run& run,
                                 const Options& options) {
  std::vector<CaseVerdict> out;
  std::set<std::string> matched;
  std::vector<std::size_t> compared;  // indices into out that need a decision
  std::vector<Basis> bases;           // what each of them rests on
  const std::string run_fp = run.env.fingerprint();
  const bool fp_mismatch = !options.allow_fingerprint_mismatch && !baseline.fingerprint.empty() &&
                           !run.env.fields.empty() && baseline.fingerprint != run_fp;
  for (const auto& cr : run.cases) {
    CaseVerdict v;
    v.key = cr.spec.key;
    v.reference = cr.reference;
    v.tolerance = tolerance_of(cr.spec, options);
    v.ratio = v.ci_low = v.ci_high = v.p_value = v.p_adjusted = no_value;
    const BaselineCase* b = baseline.find(cr.spec, &v.baseline_key);
    if (b) matched.insert(v.baseline_key);
    if (cr.status == core::CaseStatus::failed || cr.status == core::CaseStatus::error) {
      v.verdict = Verdict::failed;
      v.reason = fmt::format("{}: {}", core::to_string(cr.status),
                             cr.message.empty() ? "no message" : cr.message);
    } else if (cr.status == core::CaseStatus::skipped) {
      if (!b) continue;
      v.verdict = Verdict::missing;
      v.reason = fmt::format("in the baseline but skipped: {}", cr.message);
    } else if (!b) {
      v.verdict = Verdict::new_case;
      auto note = baseline.notes.find(cr.spec.key);
      v.reason = note == baseline.notes.end() ? "not in the baseline"
                                              : "not in the baseline: " + note->second;
    } else if (const std::string mode = timing_mode(cr);
               !b->timing.empty() && !mode.empty() && b->timing != mode) {
      v.verdict = Verdict::inconclusive;
      v.reason = fmt::format(
          "timed as {} ({}) here but {} ({}) in the baseline: not the same quantity, not compared; "
          "update the baseline if the change of timing is intended",
          mode, describe_timing_mode(mode), b->timing, describe_timing_mode(b->timing));
    } else {
      bases.push_back(measure_effect(v, cr, *b, baseline.history, options));
      compared.push_back(out.size());
      v.unstable = core::stability(cr).note;
    }
    // What ran and how accurate it was, beside the time verdict; not across machines, where
    // other kernels are no change of the code.
    if (b && cr.status == core::CaseStatus::ok && !fp_mismatch)
      v.findings = find_changes(b->traits, traits_of(cr), cr.spec.dtype, options.findings);
    out.push_back(std::move(v));
  }
  // Significance across every compared case at once.
  std::vector<double> p;
  for (std::size_t i : compared) p.push_back(out[i].p_value);
  std::vector<double> adjusted = stats::benjamini_hochberg(p);
  for (std::size_t j = 0; j < compared.size(); ++j) {
    CaseVerdict& v = out[compared[j]];
    v.p_adjusted = adjusted[j];
    if (std::isnan(v.ci_low) || std::isnan(v.ci_high))
      untestable(v);
    else
      decide(v, options, bases[j].basis, bases[j].straddles, bases[j].note);
    if (!v.unstable.empty()) {
      v.reason = fmt::format(
          "would be {} ({}), but {}: samples from two machine states, not one "
          "figure to judge",
          to_string(v.verdict), v.reason, v.unstable);
      v.verdict = Verdict::inconclusive;
    }
    if (fp_mismatch) {
      v.reason = fmt::format(
          "would be {} ({}), but the baseline's environment {} is not this "
          "run's {}: not comparable",
          to_string(v.verdict), v.reason, baseline.fingerprint, run_fp);
      v.verdict = Verdict::inconclusive;
    }
  }
  for (CaseVerdict& v : out) mark_unchecked(v);
  for (const auto& [key, b] : baseline.cases) {
    if (matched.count(key)) continue;
    CaseVerdict v;
    v.key = v.baseline_key = key;
    v.verdict = Verdict::missing;
    v.ratio = v.ci_low = v.ci_high = v.p_value = v.p_adjusted = no_value;
    v.tolerance = options.tolerance.value_or(options.default_tolerance);
    v.baseline_median_ns = b.median_ns;
    v.baseline_n = b.n;
    v.reason = "in the baseline but not in this run";
    out.push_back(std::move(v));
  }
  return out;
}

void mark_unchecked(CaseVerdict& v) {
  if (v.reference == "none" && v.verdict != Verdict::failed)
    v.reason += std::string(v.reason.empty() ? "" : "; ") + core::kNotChecked;
}

BaselineCheck check_baseline(const Baseline& baseline, const core::Run& run,
                             const std::vector<CaseVerdict>& verdicts, const Options& options) {
  const std::string where = baseline.path.empty() ? "the baseline" : baseline.path;
  const std::string run_fp = run.env.fingerprint();
  if (!run.env.fields.empty() && baseline.fingerprint.empty())
    return {true, fmt::format("{} records no environment fingerprint, so it cannot be checked "
                              "against this run's environment {}",
                              where, run_fp)};
  if (!options.allow_fingerprint_mismatch && !run.env.fields.empty() &&
      baseline.fingerprint != run_fp)
    return {false, fmt::format("no comparable baseline: {} is from environment {}, this run is "
                               "from environment {}; nothing was compared (write a baseline on "
                               "this machine, or compare against its history)",
                               where, baseline.fingerprint, run_fp)};
  int completed = 0, judged = 0;
  for (const auto& cr : run.cases) completed += cr.status == core::CaseStatus::ok;
  for (const auto& v : verdicts) judged += !v.method.empty();
  if (completed > 0 && judged == 0) {
    std::string why;
    if (!baseline.notes.empty()) why = " (" + baseline.notes.begin()->second + ")";
    return {false, fmt::format("no comparable baseline: none of this run's {} completed case(s) "
                               "has an entry in {}{}; nothing was compared",
                               completed, where, why)};
  }
  return {};
}

int exit_code(const std::vector<CaseVerdict>& verdicts, const Options& options) {
  for (const auto& v : verdicts)
    if (fails_gate(v.verdict, options.strict, options.missing_fails) || v.findings.fails())
      return util::exit_gate_failed;
  return util::exit_pass;
}

}  // namespace attnprof::gate
