// Has a sequence of timings settled? Compares the medians of its last two windows. Used by the
// measurement engine to end warm-up (clocks ramped, caches and allocator warm, JIT done) only
// once timings stop drifting, instead of after a fixed count (triton's 25 ms warm-up can be 30%
// off, triton-lang/triton#2306).
#pragma once

#include <cstddef>
#include <span>

namespace attnprof::stats {

struct Stationarity {
  bool stationary = false;
  double rel_diff = 0;     // |median(last) - median(previous)| / median(previous)
  std::size_t window = 0;  // the window length used
};

// Windows of `window` values each, the last one ending at xs.back(). Fewer than 2 * window
// values: not stationary, rel_diff NaN.
Stationarity check_stationary(std::span<const double> xs, std::size_t window, double tolerance);

}  // namespace attnprof::stats
