// The few distribution functions attnprof's statistics need: the standard normal (for
// Mann-Whitney's large-sample approximation and interval widths) and the binomial (for
// distribution-free intervals of the median). Plain functions, no state.
#pragma once

namespace attnprof::stats {

// P(Z <= z) for a standard normal Z.
double normal_cdf(double z);

// The z with normal_cdf(z) == p, for 0 < p < 1 (Acklam's rational approximation, refined by
// one Halley step to about 1e-15 relative error). Returns -inf/+inf at p == 0/1.
double normal_quantile(double p);

// P(X <= k) for X ~ Binomial(n, p); exact (summed in log space), fine for n up to millions.
double binomial_cdf(long k, long n, double p);

}  // namespace attnprof::stats
