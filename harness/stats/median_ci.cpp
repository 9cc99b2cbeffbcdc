// Distribution-free confidence interval of the median from order statistics (median_ci.h).
#include "harness/stats/median_ci.h"

#include <algorithm>
#include <cmath>

#include "harness/stats/quantile.h"

namespace attnprof::stats {

RankInterval median_ci_ranks(std::size_t n, double level) {
  if (n == 0) return {};
  const double tail = (1 - level) / 2;
  const double ln = static_cast<double>(n);
  const double log_half_n = ln * std::log(0.5);
  // Walk the lower tail of B ~ Binomial(n, 1/2); cdf = P(B <= j) after adding term j. Terms more
  // than 9 standard deviations below the mean are below 1e-18 of the tails that matter, so the
  // walk starts there (one lgamma) and steps by the pmf ratio (n - j) / (j + 1): a few dozen
  // multiplications, cheap enough for the engine to call after every sample.
  const double start = std::max(0.0, std::floor(ln / 2 - 9 * std::sqrt(ln) / 2));
  auto j = static_cast<std::size_t>(start);
  double term = std::exp(std::lgamma(ln + 1) - std::lgamma(start + 1) -
                         std::lgamma(ln - start + 1) + log_half_n);
  double cdf = 0, achieved_tail = 0;
  std::size_t k = 0;  // 0: not even [x_(1), x_(n)] reaches the level
  for (; j < n; ++j) {
    if (cdf + term > tail) break;
    cdf += term;
    k = j + 1;  // P(B <= k-1) == cdf is still within the tail
    achieved_tail = cdf;
    if (2 * (k + 1) > n + 1) break;  // the next rank would cross the upper one
    term *= static_cast<double>(n - j) / static_cast<double>(j + 1);
  }
  if (k == 0) {
    // Even [min, max] misses the level: report it with its true coverage.
    return {1, n, std::max(0.0, 1 - 2 * std::exp(log_half_n))};
  }
  return {k, n - k + 1, 1 - 2 * achieved_tail};
}

Interval median_ci_sorted(std::span<const double> s, double level) {
  if (s.empty()) return {};
  RankInterval r = median_ci_ranks(s.size(), level);
  return {s[r.low_rank - 1], s[r.high_rank - 1], r.level};
}

Interval median_ci(std::span<const double> xs, double level) {
  return median_ci_sorted(sorted_copy(xs), level);
}

}  // namespace attnprof::stats
