// Bootstrap confidence interval of the ratio of two medians, median(b) / median(a): the gate's
// effect size ("the candidate is 1.07x the baseline, 95% CI [1.05, 1.09]"). Percentile method,
// fixed seed, so the same inputs always give the same interval.
#pragma once

#include <cstdint>
#include <span>

#include "harness/stats/interval.h"

namespace attnprof::stats {

struct BootstrapOptions {
  int resamples = 10000;
  double level = 0.95;
  std::uint64_t seed = 0x6174746e70726f66ull;  // "attnprof"
};

struct RatioEstimate {
  double ratio = 0;  // median(b) / median(a) of the samples themselves
  Interval ci;       // percentile bootstrap interval; level is the nominal one
};

// Each side is resampled with replacement independently (unpaired samples). Cost is
// O(resamples * (n_a + n_b)) with a small constant: a resample's median is found by counting
// how often each rank of the sorted sample was drawn, not by sorting the resample.
// Either side empty: NaN ratio and interval.
RatioEstimate bootstrap_median_ratio(std::span<const double> a, std::span<const double> b,
                                     const BootstrapOptions& options = {});

}  // namespace attnprof::stats
