// Hodges-Lehmann estimates with their rank-test intervals.
// Two samples: the shift is the median of all pairwise differences y_j - x_i, with the
// distribution-free (Moses) confidence interval read off the same ordered differences at ranks
// given by the Mann-Whitney critical value. On log times the shift is a log-ratio, so
// exp(shift) is a "1.04x slower" figure that uses every pair, not just the two medians.
// One sample (paired differences): the center is the median of the Walsh averages, with the
// signed-rank interval read off the same ordered averages (signed_rank.h is its test).
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

// One sample d_1..d_n (an A/B's per-round log ratios): the median of the n(n+1)/2 Walsh averages
// (d_i + d_j) / 2, i <= j (the "pseudo-median", the center of a symmetric distribution), and
// the interval [W_(k), W_(M-k+1)] of the M ordered averages, k the largest rank with
// P(V <= k-1) <= (1-level)/2 for the signed-rank statistic V: from the exact distribution below
// signed_rank_exact_below values, else the normal approximation with a continuity correction.
// With too few values for the level (n < 8 at 99%), [min, max] and its smaller coverage.
// Equal to R's wilcox.test(d, conf.int = TRUE) estimate and interval for n < 50 without ties or
// zeros. Keeps all Walsh averages (O(n^2) memory): meant for rounds, hundreds, not raw samples.
// Empty: NaN.
ShiftEstimate hodges_lehmann_one_sample(std::span<const double> d, double level = 0.95);

}  // namespace attnprof::stats
