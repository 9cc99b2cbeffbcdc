// The Wilcoxon signed-rank test on paired differences d_i (an A/B's per-round log ratios): is
// the center of the d_i zero? Rank-based like Mann-Whitney, but on pairs, so whatever both
// sides of a pair share (the machine's state during that round) cancels before ranking.
//
// Conventions follow R's wilcox.test(d, exact = NULL, correct = TRUE), so results can be checked
// against it: zeros are dropped before ranking (Wilcoxon's convention: n counts nonzero d_i);
// |d_i| get average ranks over ties; V is the sum of the ranks of the positive d_i.
//   exact    n < 50 with no ties and no zeros: P-values from the exact null distribution
//            (SignedRankDistribution), as the normal approximation is poor for few rounds.
//   normal   otherwise: mean n(n+1)/4, variance n(n+1)(2n+1)/24 - sum(t^3 - t)/48 over tie
//            groups, and a continuity correction of 1/2 towards the mean.
#pragma once

#include <span>

namespace attnprof::stats {

// Below this many values the exact signed-rank distribution is used (tests and intervals).
inline constexpr int signed_rank_exact_below = 50;

struct SignedRank {
  double v = 0;          // sum of ranks of |d_i| over the positive d_i
  int n = 0;             // nonzero differences ranked
  bool exact = false;    // p-values from the exact distribution
  double z = 0;          // (V - n(n+1)/4) / sd, no continuity correction; > 0: d tends positive
  double p_greater = 1;  // H1: d tends to be positive
  double p_less = 1;     // H1: d tends to be negative
  double p_two_sided = 1;
};

// No nonzero difference: every p-value 1.
SignedRank wilcoxon_signed_rank(std::span<const double> d);

}  // namespace attnprof::stats
