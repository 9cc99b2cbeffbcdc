// Hodges-Lehmann shift between two samples: the median of all pairwise differences y_j - x_i,
// with the distribution-free (Moses) confidence interval read off the same ordered differences
// at ranks given by the Mann-Whitney critical value. On log times the shift is a log-ratio, so
// exp(shift) is a "1.04x slower" figure that uses every pair, not just the two medians.
#pragma once

#include <span>

#include "harness/stats/interval.h"

namespace attnprof::stats {

struct ShiftEstimate {
  double shift = 0;  // median of y_j - x_i
  Interval ci;       // level: normal-approximation coverage of the chosen ranks
};

// Works in O((n + m) log(range)) time and O(n + m) memory: the k-th smallest pairwise
// difference is found by bisection on its value, counting differences below a threshold with
// two pointers over the sorted samples, so n*m differences are never stored.
// Either side empty: NaN.
ShiftEstimate hodges_lehmann(std::span<const double> x, std::span<const double> y,
                             double level = 0.95);

// The same on log(x), log(y), reported as ratios: shift = y/x, CI in ratio terms.
ShiftEstimate hodges_lehmann_ratio(std::span<const double> x, std::span<const double> y,
                                   double level = 0.95);

}  // namespace attnprof::stats
