// The paired A/B statistic of paired.h: per-pair Hodges-Lehmann estimates, a random-effects
// mean over the pairs of workers with a Hartung-Knapp interval, the verdicts and the stop rule.
#include "harness/gate/paired.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "harness/gate/timing_mode.h"
#include "harness/stats/benjamini_hochberg.h"
#include "harness/stats/distributions.h"
#include "harness/stats/hodges_lehmann.h"
#include "harness/stats/mann_whitney.h"
#include "harness/stats/quantile.h"
#include "harness/stats/student_t.h"

namespace attnprof::gate {
namespace {

// A pair's own standard error is at least this (log units, 0.01%): rounds of identical times
// (a stand-in worker) would otherwise weigh infinitely.
constexpr double min_pair_se = 1e-4;

// The level of the signed-rank interval a pair's standard error is read from: central enough
// that the exact interval of a dozen rounds is not at its extremes.
constexpr double pair_se_level = 0.90;

// Two SM clocks further apart than this (relative to the higher) differ: boost clocks move in
// steps of 15 MHz, a few percent of the range, under no cap at all.
constexpr double kClockGap = 0.03;

bool usable(const core::AbRound& r) {
  return r.base_ns > 0 && r.head_ns > 0 && std::isfinite(r.base_ns) && std::isfinite(r.head_ns);
}

bool has_q1(const core::AbRound& r) {
  return r.base_q1_ns > 0 && r.head_q1_ns > 0 && std::isfinite(r.base_q1_ns) &&
         std::isfinite(r.head_q1_ns);
}

// A case's rounds in judged() form: the statistic below reads base_ns and head_ns only.
TwoLevel two_level_of(std::span<const core::AbRound> judged_rounds, bool q1);

std::vector<double> log_ratios(std::span<const core::AbRound> rounds) {
  std::vector<double> d;
  for (const auto& r : rounds)
    if (usable(r)) d.push_back(std::log(r.head_ns / r.base_ns));
  return d;
}

std::map<int, std::vector<double>> log_ratios_by_pair(std::span<const core::AbRound> rounds) {
  std::map<int, std::vector<double>> by;
  for (const auto& r : rounds)
    if (usable(r)) by[r.pass].push_back(std::log(r.head_ns / r.base_ns));
  return by;
}

// Whether going first costs time: rounds where head went first against rounds where base did.
// If the first side pays p (log), d is about +p in head-first rounds and -p in base-first ones.
// Empty unless both orders have a few rounds and the difference is clear at 1%.
std::string order_effect(std::span<const core::AbRound> rounds) {
  std::vector<double> head_first, base_first;
  for (const auto& r : rounds)
    if (usable(r))
      (r.head_first() ? head_first : base_first).push_back(std::log(r.head_ns / r.base_ns));
  if (head_first.size() < 4 || base_first.size() < 4) return "";
  if (stats::mann_whitney(base_first, head_first).p_two_sided >= 0.01) return "";
  const double twice = stats::hodges_lehmann(base_first, head_first).shift;
  const double first = (std::exp(std::fabs(twice) / 2) - 1) * 100;
  return fmt::format(
      "order effect: the side that runs first in a round is {:.1f}% {} (the random order "
      "cancels it; a longer warm-up per batch would remove it)",
      first, twice > 0 ? "slower" : "faster");
}

// Whether one side ran its batches at lower SM clocks than the other: over the rounds where both
// read their clock, each side's median clock, and the rounds where one side's was more than
// kClockGap below the other's. Empty unless the medians differ by more than kClockGap. The rounds
// alternate within seconds, so heat and a power cap reach both sides alike; a gap that stays is
// one side's own (its kernel draws more power and is capped) or a GPU that changed under one
// side's batches. Either way the verdict stands, said beside it: its time is partly the clock's.
std::string clock_difference(std::span<const core::AbRound> rounds) {
  std::vector<double> base, head;
  int head_slower = 0, base_slower = 0;
  for (const auto& r : rounds) {
    if (!usable(r) || !(r.base_clock_mhz > 0) || !(r.head_clock_mhz > 0)) continue;
    base.push_back(r.base_clock_mhz);
    head.push_back(r.head_clock_mhz);
    if (r.head_clock_mhz < (1 - kClockGap) * r.base_clock_mhz) ++head_slower;
    if (r.base_clock_mhz < (1 - kClockGap) * r.head_clock_mhz) ++base_slower;
  }
  if (base.empty()) return "";
  const double b = stats::median(base), h = stats::median(head);
  const bool head_low = h < (1 - kClockGap) * b, base_low = b < (1 - kClockGap) * h;
  if (!head_low && !base_low) return "";
  return fmt::format(
      "clocks differed: {} ran at a median SM clock of {:.0f} MHz against {}'s {:.0f} ({:.1f}% "
      "lower, in {} of {} rounds): part of the time difference is the GPU's clock",
      head_low ? "head" : "base", head_low ? h : b, head_low ? "base" : "head", head_low ? b : h,
      (1 - (head_low ? h / b : b / h)) * 100, head_low ? head_slower : base_slower, base.size());
}

std::string joined(std::string a, const std::string& b) {
  if (a.empty()) return b;
  if (!b.empty()) a += "; " + b;
  return a;
}

// The random-effects mean of pair estimates m with variances v (two or more pairs):
// DerSimonian-Laird tau^2, then the modified Hartung-Knapp standard error.
void random_effects(const std::vector<double>& m, const std::vector<double>& v, TwoLevel& t) {
  const double k = static_cast<double>(m.size());
  double sw = 0, swm = 0, sw2 = 0;
  for (std::size_t j = 0; j < m.size(); ++j) {
    sw += 1 / v[j];
    swm += m[j] / v[j];
    sw2 += 1 / (v[j] * v[j]);
  }
  const double fixed = swm / sw;
  double q = 0;
  for (std::size_t j = 0; j < m.size(); ++j) q += (m[j] - fixed) * (m[j] - fixed) / v[j];
  const double tau2 = std::max(0.0, (q - (k - 1)) / (sw - sw2 / sw));
  double ws = 0, wsm = 0;
  for (std::size_t j = 0; j < m.size(); ++j) {
    ws += 1 / (v[j] + tau2);
    wsm += m[j] / (v[j] + tau2);
  }
  t.shift = wsm / ws;
  double hk = 0;
  for (std::size_t j = 0; j < m.size(); ++j)
    hk += (m[j] - t.shift) * (m[j] - t.shift) / (v[j] + tau2);
  // Hartung-Knapp's scale factor, at least 1: pairs that agree by chance more closely than
  // their own rounds allow do not make the interval narrower than those rounds imply.
  t.se = std::sqrt(std::max(1.0, hk / (k - 1)) / ws);
  t.tau = std::sqrt(tau2);
}

std::string with_message(const char* what, const PairedSide& side) {
  return side.message.empty() ? what : fmt::format("{}: {}", what, side.message);
}

// The log bounds of the band [1 - tol, 1 + tol].
struct Band {
  double low, high;
  explicit Band(double tol) : low(std::log1p(-std::min(tol, 0.999999))), high(std::log1p(tol)) {}
};

}  // namespace

stats::Interval TwoLevel::interval(double level) const {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (pairs < 2 || !std::isfinite(se)) return {nan, nan, 0};
  const double h = stats::student_t_quantile(0.5 + level / 2, pairs - 1) * se;
  return {shift - h, shift + h, level};
}

double TwoLevel::p_two_sided() const {
  if (pairs < 2 || !std::isfinite(se) || se <= 0) return 1;
  return 2 * (1 - stats::student_t_cdf(std::fabs(shift) / se, pairs - 1));
}

bool judged_on_q1(std::span<const core::AbRound> rounds) {
  bool any = false;
  for (const auto& r : rounds) {
    if (!usable(r)) continue;
    if (!has_q1(r)) return false;
    any = true;
  }
  return any;
}

std::vector<core::AbRound> judged(std::span<const core::AbRound> rounds) {
  std::vector<core::AbRound> out(rounds.begin(), rounds.end());
  if (judged_on_q1(rounds))
    for (auto& r : out)
      if (usable(r)) r.base_ns = r.base_q1_ns, r.head_ns = r.head_q1_ns;
  return out;
}

TwoLevel two_level(std::span<const core::AbRound> rounds) {
  return two_level_of(judged(rounds), judged_on_q1(rounds));
}

namespace {

TwoLevel two_level_of(std::span<const core::AbRound> rounds, bool q1) {
  TwoLevel t;
  t.q1 = q1;
  std::vector<double> m, v;
  for (const auto& [pass, d] : log_ratios_by_pair(rounds)) {
    if (static_cast<int>(d.size()) < min_pair_rounds) {
      ++t.left_out;
      continue;
    }
    const auto est = stats::hodges_lehmann_one_sample(d, pair_se_level);
    const double z = stats::normal_quantile(0.5 + est.ci.level / 2);
    const double se = std::max(min_pair_se, (est.ci.high - est.ci.low) / (2 * z));
    m.push_back(est.shift);
    v.push_back(se * se);
    t.rounds += static_cast<int>(d.size());
    t.per_pair.push_back({pass, static_cast<int>(d.size()), est.shift, se});
  }
  t.pairs = static_cast<int>(m.size());
  t.shift = t.se = t.tau = t.pair_low = t.pair_high = std::numeric_limits<double>::quiet_NaN();
  if (m.empty()) return t;
  double vsum = 0;
  for (double x : v) vsum += x;
  t.within = std::sqrt(vsum / static_cast<double>(v.size()));
  t.pair_low = *std::min_element(m.begin(), m.end());
  t.pair_high = *std::max_element(m.begin(), m.end());
  if (m.size() == 1)
    t.shift = m[0];
  else
    random_effects(m, v, t);
  return t;
}

}  // namespace

int pairs_needed(const TwoLevel& t, double tolerance, double level) {
  if (t.pairs < 2 || !std::isfinite(t.se)) return -1;
  const Band band(tolerance);
  // The room the half-width must fit in: to the nearer edge of the band from inside, to the
  // band from outside.
  const double room = t.shift > band.high  ? t.shift - band.high
                      : t.shift < band.low ? band.low - t.shift
                                           : std::min(band.high - t.shift, t.shift - band.low);
  const double per_pair = t.se * std::sqrt(static_cast<double>(t.pairs));
  for (int k = std::max(2, t.pairs); k <= 200; ++k)
    if (stats::student_t_quantile(0.5 + level / 2, k - 1) * per_pair / std::sqrt(k) < room)
      return k;
  return -1;
}

int min_rounds(double level) {
  int n = 1;
  while (1 - std::ldexp(1.0, 1 - n) < level && n < 64) ++n;
  return n;
}

double look_level(const StopRule& rule) {
  const int looks = std::max(1, rule.max_pairs - std::max(2, rule.min_pairs) + 1);
  return 1 - (1 - rule.confidence) / looks;
}

StopCheck check_stop(std::span<const core::AbRound> rounds, double tolerance,
                     const StopRule& rule) {
  StopCheck c;
  c.ratio = c.ci_low = c.ci_high = no_value;
  c.level = look_level(rule);
  const TwoLevel t = two_level(rounds);
  c.pairs = t.pairs;
  const bool last = t.pairs >= rule.max_pairs;
  c.look = t.pairs >= std::max(2, rule.min_pairs) || (last && t.pairs >= 2);
  if (!c.look) {
    c.decided = last;
    if (last) c.reason = fmt::format("{} pair(s) of workers: too few for an interval", t.pairs);
    return c;
  }
  const stats::Interval ci = t.interval(c.level);
  c.ratio = std::exp(t.shift);
  c.ci_low = std::exp(ci.low);
  c.ci_high = std::exp(ci.high);
  const std::string at = fmt::format("{} pairs: {:.3f}x ({:.2f}% CI {:.3f}-{:.3f})", t.pairs,
                                     c.ratio, c.level * 100, c.ci_low, c.ci_high);
  const double tol = tolerance;
  if (c.ci_low >= 1 - tol && c.ci_high <= 1 + tol) {
    c.decided = true;
    c.reason = fmt::format("{} inside +-{:.1f}%", at, tol * 100);
  } else if (c.ci_low > 1 + tol || c.ci_high < 1 - tol) {
    c.decided = true;
    c.reason = fmt::format("{} beyond the {:.1f}% tolerance", at, tol * 100);
  } else {
    c.decided = last;
    c.pairs_needed = pairs_needed(t, tol, c.level);
    c.reason = fmt::format("{} straddles +-{:.1f}%{}", at, tol * 100,
                           last ? fmt::format(" at the {}-pair limit", rule.max_pairs) : "");
  }
  return c;
}

namespace {

// The typical time of each side: the geometric mean over pairs of workers of each pair's median
// judged batch time (its lower quartile, where recorded), so both sides weigh the pairs alike (a
// pooled median would mix the machine's states differently on the two sides and can even move
// against the paired ratio).
std::pair<double, double> side_times(std::span<const core::AbRound> rounds) {
  std::map<int, std::pair<std::vector<double>, std::vector<double>>> by;
  for (const auto& r : rounds)
    if (usable(r)) by[r.pass].first.push_back(r.base_ns), by[r.pass].second.push_back(r.head_ns);
  double lb = 0, lh = 0;
  for (auto& [pass, sides] : by) {
    lb += std::log(stats::median(sides.first));
    lh += std::log(stats::median(sides.second));
  }
  const double k = static_cast<double>(by.size());
  return by.empty() ? std::pair{0.0, 0.0} : std::pair{std::exp(lb / k), std::exp(lh / k)};
}

// What an interval straddling the tolerance would need: more pairs, and the minutes when the
// case's cost per pair is known.
std::string what_would_tell(const TwoLevel& t, const PairedCase& pc, double tol, double level) {
  const int need = pairs_needed(t, tol, level);
  if (need < 0)
    return "the change is too close to the tolerance for more pairs of workers to settle it "
           "soon";
  const int more = std::max(1, need - t.pairs);
  if (pc.pair_seconds <= 0) return fmt::format("about {} more pair(s) of workers would tell", more);
  return fmt::format("about {} more pair(s) of workers would tell, about {:.1f} more minutes", more,
                     more * pc.pair_seconds / 60);
}

// What the interval rests on: "paired, 4 worker pairs, 64 rounds, pairs 0.991x-1.012x".
std::string basis_of(const TwoLevel& t, std::size_t without_time) {
  std::string b = fmt::format("paired on {}, {} worker pairs, {} rounds, pairs {:.3f}x-{:.3f}x",
                              t.q1 ? "lower quartiles" : "batch medians", t.pairs, t.rounds,
                              std::exp(t.pair_low), std::exp(t.pair_high));
  if (t.left_out)
    b += fmt::format(", {} pair(s) under {} rounds left out", t.left_out, min_pair_rounds);
  if (without_time) b += fmt::format(", {} round(s) without a time left out", without_time);
  return b;
}

// Why one pair of workers (or none) gives no verdict.
std::string too_few_pairs(const TwoLevel& t) {
  const std::string left =
      t.left_out ? fmt::format(" ({} more with under {} rounds)", t.left_out, min_pair_rounds) : "";
  if (t.pairs == 0)
    return fmt::format("no pair of workers with {} or more rounds{}: nothing to judge",
                       min_pair_rounds, left);
  return fmt::format(
      "{:.3f}x from {} rounds of one pair of workers{}: what one pair carries for its whole life "
      "(layout, page placement, core) cannot be told from a change; a verdict needs 2 or more "
      "pairs (attnprof ab measures at least 3)",
      std::exp(t.shift), t.rounds, left);
}

enum class Sides { judged, settled, none };

// A case not measured on both sides: its verdict from the statuses (settled), no verdict at all
// (none: skipped on both sides, or skipped on one and absent on the other), or judged: both ok.
Sides by_status(const PairedCase& pc, CaseVerdict& v) {
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
                   : with_message(
                         pc.base->status == core::CaseStatus::failed ? "base failed" : "base error",
                         *pc.base) +
                         "; nothing to compare against";
  } else {
    return head_ok ? Sides::judged : Sides::none;
  }
  return Sides::settled;
}

// What decide() needs besides the verdict's figures.
struct Pending {
  std::size_t at;  // index into the verdicts
  std::string basis, straddles, note;
};

// Both sides ok: the figures, and either a settled verdict (timed differently, too few pairs)
// or what decide() needs once the p-values are adjusted.
std::optional<Pending> judge(const PairedCase& pc, CaseVerdict& v, const Options& options) {
  v.baseline_key = pc.key;
  v.method = "paired";
  const std::vector<core::AbRound> rounds = judged(pc.rounds);
  const std::vector<double> d = log_ratios(rounds);
  v.baseline_n = v.candidate_n = static_cast<int>(d.size());
  std::tie(v.baseline_median_ns, v.candidate_median_ns) = side_times(rounds);
  const std::string& bt = pc.base->timing;
  const std::string& ht = pc.head->timing;
  const TwoLevel t = two_level_of(rounds, judged_on_q1(pc.rounds));
  if (!bt.empty() && !ht.empty() && bt != ht) {
    v.method.clear();
    v.verdict = Verdict::inconclusive;
    v.reason = fmt::format(
        "timed as {} ({}) in head but {} ({}) in base: not the same quantity, not compared", ht,
        describe_timing_mode(ht), bt, describe_timing_mode(bt));
    return std::nullopt;
  }
  if (t.pairs < 2) {
    v.verdict = Verdict::inconclusive;
    if (t.pairs == 1) v.ratio = std::exp(t.shift);
    v.reason = joined(too_few_pairs(t), clock_difference(pc.rounds));
    return std::nullopt;
  }
  const stats::Interval ci = t.interval(options.confidence);
  v.ratio = std::exp(t.shift);
  v.ci_low = std::exp(ci.low);
  v.ci_high = std::exp(ci.high);
  v.p_value = t.p_two_sided();
  return Pending{0, basis_of(t, rounds.size() - d.size()),
                 what_would_tell(t, pc, v.tolerance, options.confidence),
                 joined(order_effect(rounds), clock_difference(pc.rounds))};
}

}  // namespace

std::vector<CaseVerdict> compare_paired(std::span<const PairedCase> cases, const Options& options) {
  std::vector<CaseVerdict> out;
  std::vector<Pending> pending;
  for (const auto& pc : cases) {
    CaseVerdict v;
    v.key = pc.key;
    if (pc.head) v.reference = pc.head->reference;
    v.tolerance = tolerance_for(pc.tolerance, options);
    v.ratio = v.ci_low = v.ci_high = v.p_value = v.p_adjusted = no_value;
    const Sides s = by_status(pc, v);
    if (s == Sides::none) continue;
    if (pc.base && pc.head && pc.base->status == core::CaseStatus::ok &&
        pc.head->status == core::CaseStatus::ok)
      v.findings = find_changes(pc.base->traits, pc.head->traits, pc.dtype, options.findings);
    if (s == Sides::judged)
      if (auto p = judge(pc, v, options)) {
        p->at = out.size();
        pending.push_back(std::move(*p));
      }
    out.push_back(std::move(v));
  }
  std::vector<double> p;
  for (const auto& q : pending) p.push_back(out[q.at].p_value);
  const std::vector<double> adjusted = stats::benjamini_hochberg(p);
  for (std::size_t j = 0; j < pending.size(); ++j) {
    CaseVerdict& v = out[pending[j].at];
    v.p_adjusted = adjusted[j];
    decide(v, options, pending[j].basis, pending[j].straddles, pending[j].note);
  }
  for (CaseVerdict& v : out) mark_unchecked(v);
  return out;
}

}  // namespace attnprof::gate
