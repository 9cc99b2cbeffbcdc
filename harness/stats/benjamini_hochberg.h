// Benjamini-Hochberg adjustment: with a hundred cases per run, a per-case alpha of 1% would
// still flag about one unchanged case per run. Comparing BH-adjusted p-values with alpha bounds
// the expected share of false discoveries among the flagged cases by alpha instead.
#pragma once

#include <span>
#include <vector>

namespace attnprof::stats {

// Adjusted p-values in the input's order: p_adj(i) = min over ranks r >= rank(i) of
// p_(r) * N / r, capped at 1 (the step-up procedure, monotone in p). NaN entries (cases with
// no test) are passed through as NaN and do not count towards N.
std::vector<double> benjamini_hochberg(std::span<const double> p);

}  // namespace attnprof::stats
