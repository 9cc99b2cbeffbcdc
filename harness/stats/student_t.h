// Student's t distribution: the gate's history interval (one run's median against k earlier
// runs' medians; with k as small as 5 the normal quantile would understate it by half) and the
// change-point merge step's Welch t-test.
#pragma once

namespace attnprof::stats {

// P(T <= t) for T ~ Student-t with `df` > 0 degrees of freedom.
double student_t_cdf(double t, double df);

// The t with student_t_cdf(t, df) == p, for 0 < p < 1 (bisection to about 1e-12 relative).
double student_t_quantile(double p, double df);

}  // namespace attnprof::stats
