// The Wilcoxon signed-rank test on paired differences (signed_rank.h).
#include "harness/stats/signed_rank.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/stats/distributions.h"
#include "harness/stats/ranks.h"

namespace attnprof::stats {

SignedRank wilcoxon_signed_rank(std::span<const double> d) {
  SignedRank r;
  std::vector<double> magnitude;
  std::vector<bool> positive;
  for (double x : d) {
    if (x == 0 || std::isnan(x)) continue;
    magnitude.push_back(std::fabs(x));
    positive.push_back(x > 0);
  }
  const bool zeros = magnitude.size() != d.size();
  r.n = static_cast<int>(magnitude.size());
  if (r.n == 0) return r;
  const Ranks ranks = average_ranks(magnitude);
  for (std::size_t i = 0; i < magnitude.size(); ++i)
    if (positive[i]) r.v += ranks.rank[i];

  const double n = r.n, mean = n * (n + 1) / 4;
  const double var = n * (n + 1) * (2 * n + 1) / 24 - ranks.tie_term / 48;
  // var > 0 for every n >= 1, ties included (all n tied leaves n(n+1)^2 / 16).
  r.z = (r.v - mean) / std::sqrt(var);
  r.exact = r.n < signed_rank_exact_below && ranks.tie_term == 0 && !zeros;
  if (r.exact) {
    // Without ties V is a whole number.
    const SignedRankDistribution dist(r.n);
    const auto v = std::lround(r.v);
    r.p_less = dist.cdf(v);
    r.p_greater = 1 - dist.cdf(v - 1);
  } else {
    const double sd = std::sqrt(var);
    // Upper tails as normal_cdf(-x): 1 - normal_cdf(x) cancels to 0 beyond x ~ 8.
    r.p_greater = normal_cdf(-(r.v - 0.5 - mean) / sd);
    r.p_less = normal_cdf((r.v + 0.5 - mean) / sd);
  }
  r.p_greater = std::clamp(r.p_greater, 0.0, 1.0);
  r.p_less = std::clamp(r.p_less, 0.0, 1.0);
  r.p_two_sided = std::min(1.0, 2 * std::min(r.p_greater, r.p_less));
  return r;
}

}  // namespace attnprof::stats
