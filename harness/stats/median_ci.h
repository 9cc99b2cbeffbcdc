// Distribution-free confidence interval of the median from order statistics: the number of
// samples below the true median is Binomial(n, 1/2), so [x_(k), x_(n-k+1)] covers it with
// probability 1 - 2 P(B <= k-1). No assumption about the shape of the timing distribution
// (skewed, heavy-tailed, bimodal all fine), which is why the measurement engine stops on it.
#pragma once

#include <cstddef>
#include <span>

#include "harness/stats/interval.h"

namespace attnprof::stats {

// 1-based ranks (k, n-k+1) of the interval's ends: the widest-k interval with coverage >= level.
// For tiny n (n < 6 at 95%) no k reaches the level: returns (1, n) and its smaller coverage.
struct RankInterval {
  std::size_t low_rank = 0, high_rank = 0;
  double level = 0;
};
RankInterval median_ci_ranks(std::size_t n, double level = 0.95);

Interval median_ci_sorted(std::span<const double> sorted, double level = 0.95);
Interval median_ci(std::span<const double> xs, double level = 0.95);

}  // namespace attnprof::stats
