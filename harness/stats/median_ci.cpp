#include "harness/stats/median_ci.h"

#include <cmath>

#include "harness/stats/quantile.h"

namespace attnprof::stats {

RankInterval median_ci_ranks(std::size_t n, double level) {
  if (n == 0) return {};
  const double tail = (1 - level) / 2;
  // Walk the lower tail of Binomial(n, 1/2): cdf = P(B <= k-1) for the candidate rank k.
  const double ln = static_cast<double>(n);
  const double lgn = std::lgamma(ln + 1), log_half_n = ln * std::log(0.5);
  double cdf = 0;
  std::size_t k = 0;  // 0: not even [x_(1), x_(n)] reaches the level
  double achieved_tail = 0;
  for (std::size_t j = 0; j < n; ++j) {
    double term = std::exp(lgn - std::lgamma(static_cast<double>(j) + 1) -
                           std::lgamma(ln - static_cast<double>(j) + 1) + log_half_n);
    if (cdf + term > tail) break;
    cdf += term;
    k = j + 1;  // P(B <= k-1) == cdf is still within the tail
    achieved_tail = cdf;
    if (2 * (k + 1) > n + 1) break;  // the next rank would cross the upper one
  }
  if (k == 0) {
    // Even [min, max] misses the level: report it with its true coverage.
    double p0 = std::exp(log_half_n);
    return {1, n, std::max(0.0, 1 - 2 * p0)};
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
