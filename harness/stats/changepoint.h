// Change points in a series (one case's metric over its history, oldest first), the way Apache
// Otava and MongoDB find them: hierarchical E-divisive means (Matteson & James 2014) proposes
// splits, each accepted only if a permutation test says the split is unlikely under shuffling;
// then, as Otava's merge step does, the weakest change point is dropped until every remaining
// one passes a Welch t-test between its neighbouring segments and a minimum magnitude.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "harness/stats/student_t.h"  // student_t_cdf, used by welch_t_test

namespace attnprof::stats {

struct ChangePointSettings {
  double permutation_alpha = 0.05;  // MongoDB's default
  int permutations = 100;           // MongoDB's default
  double t_test_alpha = 0.001;      // Otava's default
  double min_magnitude = 0.0;       // |after/before - 1| below this is not a change
  int min_segment = 3;              // fewest points on either side of a change
  std::uint64_t seed = 1;           // the permutations are seeded: same input, same answer
};

struct ChangePoint {
  std::size_t index = 0;  // first point of the new segment
  double before_mean = 0, after_mean = 0;
  double relative_change = 0;  // after_mean / before_mean - 1
  double p_value = 1;          // Welch t-test between the neighbouring segments
  double permutation_p = 1;    // of the E-divisive split when it was proposed
};

std::vector<ChangePoint> detect_change_points(std::span<const double> series,
                                              const ChangePointSettings& settings = {});

// The E-divisive statistic q(tau) for splitting x at tau, maximized over tau; exposed for tests.
struct Split {
  std::size_t tau = 0;  // 0: no admissible split
  double q = 0;
};
Split best_split(std::span<const double> x, int min_segment);

// Two-sided p-value of Welch's t-test of equal means; 1 when either side has fewer than 2.
double welch_t_test(std::span<const double> a, std::span<const double> b);

}  // namespace attnprof::stats
