#include "harness/gate/paired.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/gate/timing_mode.h"
#include "harness/stats/benjamini_hochberg.h"
#include "harness/stats/hodges_lehmann.h"
#include "harness/stats/mann_whitney.h"
#include "harness/stats/quantile.h"
#include "harness/stats/runs_test.h"
#include "harness/stats/signed_rank.h"

namespace attnprof::gate {
namespace {

// Below this, the runs test says the rounds come in stretches. Strict on purpose: a true
// change with steady rounds is downgraded once in a thousand cases.
constexpr double unsteady_p = 0.001;

bool usable(const PairedRound& r) {
  return r.base_ns > 0 && r.head_ns > 0 && std::isfinite(r.base_ns) && std::isfinite(r.head_ns);
}

std::vector<double> log_ratios(std::span<const PairedRound> rounds) {
  std::vector<double> d;
  for (const auto& r : rounds)
    if (usable(r)) d.push_back(std::log(r.head_ns / r.base_ns));
  return d;
}

// Whether going first costs time: rounds where head went first against rounds where base did.
// If the first side pays p (log), d is about +p in head-first rounds and -p in base-first ones.
// Empty unless both orders have a few rounds and the difference is clear at 1%.
std::string order_effect(std::span<const PairedRound> rounds) {
  std::vector<double> head_first, base_first;
  for (const auto& r : rounds)
    if (usable(r))
      (r.head_first ? head_first : base_first).push_back(std::log(r.head_ns / r.base_ns));
  if (head_first.size() < 4 || base_first.size() < 4) return "";
  if (stats::mann_whitney(base_first, head_first).p_two_sided >= 0.01) return "";
  const double twice = stats::hodges_lehmann(base_first, head_first).shift;
  const double first = (std::exp(std::fabs(twice) / 2) - 1) * 100;
  return fmt::format(
      "order effect: the side that runs first in a round is {:.1f}% {} (the random order "
      "cancels it; a longer warm-up per batch would remove it)",
      first, twice > 0 ? "slower" : "faster");
}

// The round counts the rule may look at, before any too early for an interval are dropped:
// 12, 16, 24, 32, 48, 64, ... (alternately x4/3 and x1.5) below max_rounds, then max_rounds.
// Their number is the Bonferroni divisor, so the per-look level depends on the schedule only.
std::vector<int> scheduled_points(int max_rounds) {
  std::vector<int> points;
  for (int p = 12, i = 0; p < max_rounds; p = i++ % 2 ? p * 3 / 2 : p * 4 / 3) points.push_back(p);
  points.push_back(std::max(1, max_rounds));
  return points;
}

double look_level(int max_rounds, double confidence) {
  return 1 - (1 - confidence) / static_cast<double>(scheduled_points(max_rounds).size());
}

std::string with_message(const char* what, const PairedSide& side) {
  return side.message.empty() ? what : fmt::format("{}: {}", what, side.message);
}

}  // namespace

int min_rounds(double level) {
  int n = 1;
  while (1 - std::ldexp(1.0, 1 - n) < level && n < 64) ++n;
  return n;
}

std::vector<int> look_schedule(int max_rounds, double confidence) {
  const int first = min_rounds(look_level(max_rounds, confidence));
  std::vector<int> looks;
  for (int p : scheduled_points(max_rounds))
    if (p >= first || p == max_rounds) looks.push_back(p);
  return looks;
}

StopCheck check_stop(std::span<const PairedRound> rounds, double tolerance, const StopRule& rule) {
  StopCheck c;
  c.ratio = c.ci_low = c.ci_high = no_value;
  const std::vector<int> looks = look_schedule(rule.max_rounds, rule.confidence);
  c.level = look_level(rule.max_rounds, rule.confidence);
  const std::vector<double> d = log_ratios(rounds);
  const int n = static_cast<int>(d.size());
  auto next = std::upper_bound(looks.begin(), looks.end(), n);
  c.next_look = next == looks.end() ? 0 : *next;
  c.look = std::binary_search(looks.begin(), looks.end(), n);
  const bool last = n >= rule.max_rounds;
  if (!c.look && !last) return c;
  c.look = true;
  auto est = stats::hodges_lehmann_one_sample(d, c.level);
  c.ratio = std::exp(est.shift);
  c.ci_low = std::exp(est.ci.low);
  c.ci_high = std::exp(est.ci.high);
  const std::string at = fmt::format("{} rounds: {:.3f}x ({:.2f}% CI {:.3f}-{:.3f})", n, c.ratio,
                                     c.level * 100, c.ci_low, c.ci_high);
  const double tol = tolerance;
  if (c.ci_low >= 1 - tol && c.ci_high <= 1 + tol) {
    c.decided = true;
    c.reason = fmt::format("{} inside +-{:.1f}%", at, tol * 100);
  } else if (c.ci_low > 1 + tol || c.ci_high < 1 - tol) {
    c.decided = true;
    c.reason = fmt::format("{} beyond the {:.1f}% tolerance", at, tol * 100);
  } else if (last) {
    c.decided = true;
    c.reason = fmt::format("{} still straddles +-{:.1f}% at the {}-round limit", at, tol * 100,
                           rule.max_rounds);
  } else {
    c.reason =
        fmt::format("{} straddles +-{:.1f}%; next look at {} rounds", at, tol * 100, c.next_look);
  }
  return c;
}

std::vector<CaseVerdict> compare_paired(std::span<const PairedCase> cases, const Options& options) {
  std::vector<CaseVerdict> out;
  std::vector<std::size_t> compared, compared_case;
  std::vector<std::string> bases, notes;
  const int needed = min_rounds(options.confidence);
  for (const auto& pc : cases) {
    CaseVerdict v;
    v.key = pc.key;
    v.tolerance = tolerance_for(pc.tolerance, options);
    v.ratio = v.ci_low = v.ci_high = v.p_value = v.p_adjusted = no_value;
    const bool base_ok = pc.base && pc.base->status == core::CaseStatus::ok;
    const bool head_ok = pc.head && pc.head->status == core::CaseStatus::ok;
    const bool head_skipped = pc.head && pc.head->status == core::CaseStatus::skipped;
    if (pc.head && !head_ok && !head_skipped) {
      v.verdict = Verdict::failed;
      v.reason = fmt::format("{}: {}", core::to_string(pc.head->status),
                             pc.head->message.empty() ? "no message" : pc.head->message);
    } else if (base_ok && !head_ok) {
      v.verdict = Verdict::missing;
      v.baseline_key = pc.key;
      v.reason = head_skipped ? with_message("in base but skipped in head", *pc.head)
                              : "in base but not in head";
    } else if (head_ok && !base_ok) {
      v.verdict = Verdict::new_case;
      v.reason = !pc.base ? "not in base"
                 : pc.base->status == core::CaseStatus::skipped
                     ? with_message("skipped in base", *pc.base)
                     : with_message(pc.base->status == core::CaseStatus::failed ? "base failed"
                                                                                : "base error",
                                    *pc.base) +
                           "; nothing to compare against";
    } else if (!head_ok) {
      continue;  // skipped on both sides, or skipped on one and absent on the other
    } else {
      v.baseline_key = pc.key;
      v.method = "paired";
      std::vector<double> base_ns, head_ns;
      for (const auto& r : pc.rounds)
        if (usable(r)) base_ns.push_back(r.base_ns), head_ns.push_back(r.head_ns);
      v.baseline_n = v.candidate_n = static_cast<int>(base_ns.size());
      v.baseline_median_ns = stats::median(base_ns);
      v.candidate_median_ns = stats::median(head_ns);
      const std::string& bt = pc.base->timing;
      const std::string& ht = pc.head->timing;
      if (!bt.empty() && !ht.empty() && bt != ht) {
        v.method.clear();
        v.verdict = Verdict::inconclusive;
        v.reason = fmt::format(
            "timed as {} ({}) in head but {} ({}) in base: not the same quantity, not compared", ht,
            describe_timing_mode(ht), bt, describe_timing_mode(bt));
      } else if (v.baseline_n < needed) {
        v.verdict = Verdict::inconclusive;
        v.reason = fmt::format(
            "{} round(s) with a time on both sides; a {:.0f}% interval needs at least {}",
            v.baseline_n, options.confidence * 100, needed);
      } else {
        const std::vector<double> d = log_ratios(pc.rounds);
        const auto est = stats::hodges_lehmann_one_sample(d, options.confidence);
        v.ratio = std::exp(est.shift);
        v.ci_low = std::exp(est.ci.low);
        v.ci_high = std::exp(est.ci.high);
        v.p_value = stats::wilcoxon_signed_rank(d).p_two_sided;
        const std::size_t left_out = pc.rounds.size() - d.size();
        bases.push_back(left_out ? fmt::format("paired, {} rounds, {} without a time left out",
                                               d.size(), left_out)
                                 : fmt::format("paired, {} rounds", d.size()));
        notes.push_back(order_effect(pc.rounds));
        compared.push_back(out.size());
        compared_case.push_back(static_cast<std::size_t>(&pc - cases.data()));
      }
    }
    out.push_back(std::move(v));
  }
  std::vector<double> p;
  for (std::size_t i : compared) p.push_back(out[i].p_value);
  const std::vector<double> adjusted = stats::benjamini_hochberg(p);
  for (std::size_t j = 0; j < compared.size(); ++j) {
    CaseVerdict& v = out[compared[j]];
    v.p_adjusted = adjusted[j];
    decide(v, options, bases[j], "more rounds would tell", notes[j]);
  }
  // A verdict of change needs rounds that tell one story. When the per-round ratios come in
  // stretches (one worker slow for seconds, then not: a descheduled thread on a shared machine),
  // the change is claimed only if it holds in every stretch of at least three rounds, the one
  // where the two sides were closest included; otherwise it is the machine's state.
  for (std::size_t j = 0; j < compared.size(); ++j) {
    CaseVerdict& v = out[compared[j]];
    if (v.verdict != Verdict::regression && v.verdict != Verdict::improvement) continue;
    const std::vector<double> d = log_ratios(cases[compared_case[j]].rounds);
    const stats::RunsTest rt = stats::runs_test(d);
    if (rt.p_fewer >= unsteady_p) continue;
    // Each stretch's own level: the median of a run of rounds on one side of the median.
    const double m = stats::median(d);
    double level = v.verdict == Verdict::regression ? HUGE_VAL : -HUGE_VAL;
    std::vector<double> run;
    auto close_run = [&] {
      if (run.size() >= 3) {
        const double l = std::exp(stats::median(run));
        level = v.verdict == Verdict::regression ? std::min(level, l) : std::max(level, l);
      }
      run.clear();
    };
    int side = 0;
    for (double x : d) {
      if (x == m) continue;
      const int s2 = x > m ? 1 : -1;
      if (s2 != side) close_run();
      side = s2;
      run.push_back(x);
    }
    close_run();
    if (v.verdict == Verdict::regression ? level > 1 + v.tolerance : level < 1 - v.tolerance)
      continue;
    v.reason = fmt::format(
        "{:.3f}x, but the rounds came in stretches ({} runs above and below their median where "
        "{:.0f} were expected, p {:.1e}) and in one of them the ratio was {:.3f}x: one side's "
        "state changed while it was measured; measure again on a quieter machine",
        v.ratio, rt.runs, rt.expected, rt.p_fewer, level);
    v.verdict = Verdict::inconclusive;
  }
  return out;
}

}  // namespace attnprof::gate
