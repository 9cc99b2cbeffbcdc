// The Mann-Whitney U test with tie and continuity corrections (mann_whitney.h).
#include "harness/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/stats/distributions.h"
#include "harness/stats/ranks.h"

namespace attnprof::stats {

MannWhitney mann_whitney(std::span<const double> x, std::span<const double> y) {
  MannWhitney r;
  if (x.empty() || y.empty()) return r;
  const double n = static_cast<double>(x.size()), m = static_cast<double>(y.size());
  std::vector<double> all(x.begin(), x.end());
  all.insert(all.end(), y.begin(), y.end());
  const Ranks ranks = average_ranks(all);
  double rank_sum_y = 0;
  for (std::size_t i = x.size(); i < all.size(); ++i) rank_sum_y += ranks.rank[i];
  const double tie_term = ranks.tie_term;
  const double total = n + m;
  r.u = rank_sum_y - m * (m + 1) / 2;
  const double mean = n * m / 2;
  const double var = n * m / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (!(var > 0)) return r;
  const double sd = std::sqrt(var);
  r.z = (r.u - mean) / sd;
  // The upper tail as normal_cdf(-x), not 1 - normal_cdf(x), which cancels to 0 beyond x ~ 8.
  r.p_greater = normal_cdf(-(r.u - 0.5 - mean) / sd);
  r.p_less = normal_cdf((r.u + 0.5 - mean) / sd);
  r.p_greater = std::clamp(r.p_greater, 0.0, 1.0);
  r.p_less = std::clamp(r.p_less, 0.0, 1.0);
  r.p_two_sided = std::min(1.0, 2 * std::min(r.p_greater, r.p_less));
  return r;
}

}  // namespace attnprof::stats
