// Average ranks with ties, shared by the rank tests (Mann-Whitney on pooled samples, the
// Wilcoxon signed-rank test on absolute differences): tied values share the mean of the ranks
// they span, and the tie term sum(t^3 - t) over tie groups of size t is what both tests'
// normal approximations subtract from their variance.
#pragma once

#include <span>
#include <vector>

namespace attnprof::stats {

struct Ranks {
  std::vector<double> rank;  // 1-based average ranks, in the input's order
  double tie_term = 0;       // sum over tie groups of t^3 - t; 0 without ties
};

Ranks average_ranks(std::span<const double> xs);

}  // namespace attnprof::stats
