// Order statistics of a sample: quantiles, the median, the median absolute deviation.
// Functions named *_sorted expect ascending input and do not copy; the others copy and sort.
#pragma once

#include <span>
#include <vector>

namespace attnprof::stats {

// Linear interpolation between closest ranks (Hyndman-Fan type 7, numpy's default), p in [0, 1].
// An empty input gives NaN.
double quantile_sorted(std::span<const double> sorted, double p);
double quantile(std::span<const double> xs, double p);

double median_sorted(std::span<const double> sorted);
double median(std::span<const double> xs);

// Median absolute deviation from the median, unscaled (multiply by 1.4826 for a normal's sigma).
double mad(std::span<const double> xs);

std::vector<double> sorted_copy(std::span<const double> xs);

}  // namespace attnprof::stats
