// Quantiles, the median and the median absolute deviation of a sample (quantile.h).
#include "harness/stats/quantile.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnprof::stats {

std::vector<double> sorted_copy(std::span<const double> xs) {
  std::vector<double> v(xs.begin(), xs.end());
  std::sort(v.begin(), v.end());
  return v;
}

double quantile_sorted(std::span<const double> s, double p) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  p = std::clamp(p, 0.0, 1.0);
  double h = p * static_cast<double>(s.size() - 1);
  auto i = static_cast<std::size_t>(std::floor(h));
  if (i + 1 >= s.size()) return s.back();
  return s[i] + (h - static_cast<double>(i)) * (s[i + 1] - s[i]);
}

double quantile(std::span<const double> xs, double p) {
  return quantile_sorted(sorted_copy(xs), p);
}

double median_sorted(std::span<const double> s) {
  return quantile_sorted(s, 0.5);
}

double median(std::span<const double> xs) {
  return median_sorted(sorted_copy(xs));
}

double mad(std::span<const double> xs) {
  if (xs.empty()) return std::numeric_limits<double>::quiet_NaN();
  double m = median(xs);
  std::vector<double> dev;
  dev.reserve(xs.size());
  for (double x : xs) dev.push_back(std::abs(x - m));
  return median(dev);
}

}  // namespace attnprof::stats
