#include "harness/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/stats/distributions.h"

namespace attnprof::stats {

MannWhitney mann_whitney(std::span<const double> x, std::span<const double> y) {
  MannWhitney r;
  if (x.empty() || y.empty()) return r;
  const double n = static_cast<double>(x.size()), m = static_cast<double>(y.size());
  struct Item {
    double v;
    bool is_y;
  };
  std::vector<Item> all;
  all.reserve(x.size() + y.size());
  for (double v : x) all.push_back({v, false});
  for (double v : y) all.push_back({v, true});
  std::sort(all.begin(), all.end(), [](const Item& a, const Item& b) { return a.v < b.v; });
  // Average ranks over ties; collect sum(t^3 - t) for the variance correction.
  double rank_sum_y = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].v == all[i].v) ++j;
    const double t = static_cast<double>(j - i);
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].is_y) rank_sum_y += avg_rank;
    tie_term += t * t * t - t;
    i = j;
  }
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
