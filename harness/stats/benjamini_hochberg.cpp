// Benjamini-Hochberg adjustment of a run's per-case p-values (benjamini_hochberg.h).
#include "harness/stats/benjamini_hochberg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnprof::stats {

std::vector<double> benjamini_hochberg(std::span<const double> p) {
  std::vector<double> adj(p.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (!std::isnan(p[i])) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  const double count = static_cast<double>(idx.size());
  double running = 1;
  for (std::size_t r = idx.size(); r-- > 0;) {
    running = std::min(running, p[idx[r]] * count / static_cast<double>(r + 1));
    adj[idx[r]] = std::min(1.0, running);
  }
  return adj;
}

}  // namespace attnprof::stats
