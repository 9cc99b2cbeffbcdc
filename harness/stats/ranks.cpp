// Average ranks with ties, and the tie term, for the rank tests (ranks.h).
#include "harness/stats/ranks.h"

#include <algorithm>
#include <numeric>

namespace attnprof::stats {

Ranks average_ranks(std::span<const double> xs) {
  Ranks r;
  r.rank.resize(xs.size());
  std::vector<std::size_t> order(xs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return xs[a] < xs[b]; });
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && xs[order[j]] == xs[order[i]]) ++j;
    const double t = static_cast<double>(j - i);
    const double avg = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k) r.rank[order[k]] = avg;
    r.tie_term += t * t * t - t;
    i = j;
  }
  return r;
}

}  // namespace attnprof::stats
