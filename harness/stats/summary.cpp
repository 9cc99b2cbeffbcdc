// core::Summary of a sample: the robust figures every report and baseline carries (summary.h).
#include "harness/stats/summary.h"

#include <numeric>

#include "harness/stats/median_ci.h"
#include "harness/stats/quantile.h"

namespace attnprof::stats {

core::Summary summarize(std::span<const double> xs, double level) {
  core::Summary s;
  s.n = static_cast<int>(xs.size());
  if (xs.empty()) {
    s.ci_level = 0;
    return s;
  }
  std::vector<double> v = sorted_copy(xs);
  s.median_ns = median_sorted(v);
  s.q1_ns = quantile_sorted(v, 0.25);
  s.q3_ns = quantile_sorted(v, 0.75);
  s.min_ns = v.front();
  s.max_ns = v.back();
  s.mean_ns = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  Interval ci = median_ci_sorted(v, level);
  s.ci_low_ns = ci.low;
  s.ci_high_ns = ci.high;
  s.ci_level = ci.level;
  return s;
}

}  // namespace attnprof::stats
