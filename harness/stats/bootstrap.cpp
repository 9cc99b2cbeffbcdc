// Seeded percentile bootstrap of the ratio of two medians, the gate's effect size
// (bootstrap.h).
#include "harness/stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "harness/stats/quantile.h"
#include "harness/stats/rng.h"

namespace attnprof::stats {

namespace {

// Median of one resample of `sorted`, drawn with replacement. Because `sorted` is ascending,
// the resample's k-th smallest value is sorted[r] for the smallest rank r whose cumulative draw
// count reaches k: counting draws per rank replaces a sort or nth_element of the resample.
double resample_median(const std::vector<double>& sorted, Rng& rng,
                       std::vector<std::uint32_t>& counts) {
  const auto n = static_cast<std::uint32_t>(sorted.size());
  std::fill(counts.begin(), counts.end(), 0u);
  for (std::uint32_t i = 0; i < n; ++i) ++counts[rng.below(n)];
  const std::uint32_t k_low = (n + 1) / 2, k_high = n / 2 + 1;  // 1-based ranks of the middle
  std::uint32_t cum = 0, r = 0;
  while (cum + counts[r] < k_low) cum += counts[r++];
  const double low = sorted[r];
  while (cum + counts[r] < k_high) cum += counts[r++];
  return (low + sorted[r]) / 2;
}

}  // namespace

RatioEstimate bootstrap_median_ratio(std::span<const double> a, std::span<const double> b,
                                     const BootstrapOptions& options) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (a.empty() || b.empty()) return {nan, {nan, nan, 0}};
  std::vector<double> sa = sorted_copy(a), sb = sorted_copy(b);
  RatioEstimate est;
  est.ratio = median_sorted(sb) / median_sorted(sa);
  Rng rng(options.seed);
  std::vector<std::uint32_t> ca(sa.size()), cb(sb.size());
  std::vector<double> ratios(static_cast<std::size_t>(std::max(1, options.resamples)));
  for (double& r : ratios) {
    double ma = resample_median(sa, rng, ca);
    r = resample_median(sb, rng, cb) / ma;
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - options.level) / 2;
  est.ci = {quantile_sorted(ratios, tail), quantile_sorted(ratios, 1 - tail), options.level};
  return est;
}

}  // namespace attnprof::stats
