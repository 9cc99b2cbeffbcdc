// The sampling engine (engine.h): warm-up until stationary, sampling until the median's CI is
// narrow or a budget ends it, then the summary with throttled samples marked.
#include "harness/measure/engine.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "harness/core/clock.h"
#include "harness/stats/median_ci.h"
#include "harness/stats/quantile.h"
#include "harness/stats/stationarity.h"
#include "harness/stats/summary.h"

namespace attnprof::measure {

using core::epoch_ns;
using core::kept_ns;
using core::steady_ns;

namespace {

// Relative half-width of the median's CI: the larger side, since the interval of a skewed
// distribution is asymmetric and the target is a promise about both.
// Infinite when the samples are too few for an interval of that confidence at all (the order
// statistics of n < 6 samples cannot cover the median with 95%): a run of one sample never
// "meets" a CI target.
double rel_half_width_sorted(const std::vector<double>& kept, double level) {
  const double med = stats::median_sorted(kept);
  const stats::Interval ci = stats::median_ci_sorted(kept, level);
  if (ci.level + 1e-9 < level) return std::numeric_limits<double>::infinity();
  return std::max(med - ci.low, ci.high - med) / med;
}

}  // namespace

int mark_throttled(std::vector<core::Sample>& samples, double ratio) {
  std::vector<double> clocks;
  for (const auto& s : samples)
    if (s.sm_clock_mhz) clocks.push_back(*s.sm_clock_mhz);
  int dropped = 0;
  const double threshold = clocks.empty() ? 0 : ratio * stats::median(clocks);
  for (auto& s : samples) {
    s.dropped = s.sm_clock_mhz && *s.sm_clock_mhz < threshold;
    dropped += s.dropped;
  }
  return dropped;
}

WarmUp warm_up(Timer& timer, const core::MeasureSettings& settings, const Options& options) {
  const auto now = options.clock ? options.clock : std::function<std::int64_t()>(steady_ns);
  const std::int64_t start = now();
  const double budget_ns = settings.time_budget_s * 1e9;
  WarmUp r;
  const double warmup_target_ns = settings.warmup_ms * 1e6;
  const double cap_ns =
      std::max(warmup_target_ns, std::min(options.warmup_cap_s * 1e9, budget_ns / 2));
  std::vector<double> warm;
  while (true) {
    const core::Sample s = timer.sample();
    warm.push_back(static_cast<double>(s.ns));
    r.ns += static_cast<double>(s.ns);
    ++r.calls;
    if (r.ns >= warmup_target_ns) {
      const std::size_t w = std::min(options.window, warm.size() / 2);
      if (w >= options.min_window) {
        const auto st = stats::check_stationary(warm, w, options.stationary_tolerance);
        r.rel_diff = st.rel_diff;
        if (st.stationary) {
          r.stationary = true;
          break;
        }
      }
    }
    if (static_cast<double>(now() - start) >= cap_ns || warm.size() >= options.warmup_max_calls)
      break;
  }
  return r;
}

std::vector<core::Sample> sample_batch(Timer& timer, double batch_ns, int min_calls,
                                       int max_calls) {
  std::vector<core::Sample> out;
  double spent = 0;
  const std::int64_t start = steady_ns();
  const auto fewest = static_cast<std::size_t>(std::max(1, std::min(min_calls, max_calls)));
  while (out.size() < fewest || (spent < batch_ns && static_cast<int>(out.size()) < max_calls)) {
    core::Sample s = timer.sample();
    if (s.at_ns == 0) s.at_ns = epoch_ns();
    out.push_back(s);
    // Wall time, not the samples' own durations: a GPU sample's wall time includes its L2
    // flush and synchronisation, and the batch is a slice of the machine's time.
    spent = static_cast<double>(steady_ns() - start);
  }
  return out;
}

core::Summary summarize(std::vector<core::Sample>& samples, const core::MeasureSettings& settings,
                        const Options& options, int* dropped) {
  const int d = mark_throttled(samples, options.throttle_ratio);
  if (dropped) *dropped = d;
  std::vector<double> kept = kept_ns(samples);
  core::Summary summary = stats::summarize(kept, options.ci_level);
  std::sort(kept.begin(), kept.end());
  const auto min_samples = static_cast<std::size_t>(std::max(1, settings.min_samples));
  summary.converged = kept.size() >= min_samples && !kept.empty() &&
                      rel_half_width_sorted(kept, options.ci_level) <= settings.target_rel_ci;
  return summary;
}

Result run(Timer& timer, const core::MeasureSettings& settings, const Options& options) {
  const auto now = options.clock ? options.clock : std::function<std::int64_t()>(steady_ns);
  const std::int64_t start = now();
  const double budget_ns = settings.time_budget_s * 1e9;
  Result r;

  const WarmUp w = warm_up(timer, settings, options);
  r.warmup_calls = w.calls;
  r.warmup_ns = w.ns;
  r.stationary = w.stationary;
  r.warmup_rel_diff = w.rel_diff;
  if (options.sampling_starts) options.sampling_starts();

  // Sampling. The CI is re-evaluated after every sample while samples are few, then every
  // n/64 samples (an overshoot of at most 1.6%). Kept durations are held sorted, by insertion,
  // so a check reads three order statistics instead of sorting; only once samples carry clocks
  // (and throttle flags can change with the run's median clock) is the set rebuilt at a check.
  const auto max_samples = static_cast<std::size_t>(std::max(1, settings.max_samples));
  const auto min_samples = static_cast<std::size_t>(std::max(1, settings.min_samples));
  std::size_t next_check = 1;
  std::vector<double> sorted;
  bool any_clock = false;
  while (true) {
    core::Sample s = timer.sample();
    if (s.at_ns == 0) s.at_ns = epoch_ns();
    r.samples.push_back(s);
    any_clock = any_clock || s.sm_clock_mhz.has_value();
    if (!any_clock) {
      const auto v = static_cast<double>(s.ns);
      sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), v), v);
    }
    const std::size_t n = r.samples.size();
    if (n >= next_check) {
      next_check = n < 256 ? n + 1 : n + n / 64;
      if (any_clock) {
        mark_throttled(r.samples, options.throttle_ratio);
        sorted = kept_ns(r.samples);
        std::sort(sorted.begin(), sorted.end());
      }
      if (sorted.size() >= min_samples &&
          rel_half_width_sorted(sorted, options.ci_level) <= settings.target_rel_ci) {
        r.stop_reason = "ci target met";
        break;
      }
    }
    if (n >= max_samples) {
      r.stop_reason = "max samples";
      break;
    }
    if (static_cast<double>(now() - start) >= budget_ns) {
      r.stop_reason = "time budget";
      break;
    }
  }

  // Final accounting over all samples: the run's median clock is now known best.
  r.summary = summarize(r.samples, settings, options, &r.dropped);
  return r;
}

}  // namespace attnprof::measure
