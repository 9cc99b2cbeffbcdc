// Mann-Whitney U (Wilcoxon rank-sum) test: do the candidate's times tend to be larger than the
// baseline's? Rank-based, so one preempted sample cannot decide it. p-values from the normal
// approximation with the tie correction and a continuity correction; accurate for the sample
// sizes the measurement engine produces (n >= 10 per side). Exact small-sample tables are not
// implemented: with fewer than about 8 samples per side treat p as rough.
#pragma once

#include <span>

namespace attnprof::stats {

struct MannWhitney {
  double u = 0;          // #{(i, j): y_j > x_i} + 0.5 #{ties}
  double z = 0;          // standardized U (no continuity correction), > 0: y larger
  double p_greater = 1;  // H1: y tends to be larger
  double p_less = 1;     // H1: y tends to be smaller
  double p_two_sided = 1;
};

// Either side empty, or every value tied: all p-values 1.
MannWhitney mann_whitney(std::span<const double> x, std::span<const double> y);

}  // namespace attnprof::stats
