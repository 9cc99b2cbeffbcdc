// core::Summary of a sample: the robust figures every report and baseline carries.
#pragma once

#include <span>

#include "harness/core/types.h"

namespace attnprof::stats {

// Median, quartiles, mean, extremes and the distribution-free CI of the median at `level`
// (the achieved coverage goes into ci_level). `converged` is left false: only the measurement
// engine knows whether its stopping target was met.
core::Summary summarize(std::span<const double> xs, double level = 0.95);

}  // namespace attnprof::stats
