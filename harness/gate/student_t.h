// Student's t distribution, for the history baseline's prediction-style interval: the gate
// compares one run's median against k earlier runs' medians, and with k as small as 5 the
// normal quantile would understate the interval by half. Host-only, no state.
// (It would sit naturally in harness/stats; it lives here because the gate is its only user.)
#pragma once

namespace attnprof::gate {

// P(T <= t) for T ~ Student-t with `df` > 0 degrees of freedom.
double student_t_cdf(double t, double df);

// The t with student_t_cdf(t, df) == p, for 0 < p < 1 (bisection to about 1e-12 relative).
double student_t_quantile(double p, double df);

}  // namespace attnprof::gate
