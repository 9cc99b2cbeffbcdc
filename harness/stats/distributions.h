// The few distribution functions attnprof's statistics need: the standard normal (for
// Mann-Whitney's large-sample approximation and interval widths), the binomial (for
// distribution-free intervals of the median) and the Wilcoxon signed-rank null distribution (for
// paired tests and intervals on small round counts).
#pragma once

#include <vector>

namespace attnprof::stats {

// P(Z <= z) for a standard normal Z.
double normal_cdf(double z);

// The z with normal_cdf(z) == p, for 0 < p < 1 (Acklam's rational approximation, refined by
// one Halley step to about 1e-15 relative error). Returns -inf/+inf at p == 0/1.
double normal_quantile(double p);

// P(X <= k) for X ~ Binomial(n, p); exact (summed in log space), fine for n up to millions.
double binomial_cdf(long k, long n, double p);

// The null distribution of the Wilcoxon signed-rank statistic V: the sum of those ranks 1..n
// whose sign is +, each sign a fair coin. Exact, from p_n(v) = (p_{n-1}(v) + p_{n-1}(v - n)) / 2
// over all n(n+1)/2 + 1 values of V: O(n^3) time, so meant for the small n where the normal
// approximation is poor (signed_rank.h uses it below 50).
class SignedRankDistribution {
 public:
  explicit SignedRankDistribution(int n);
  int n() const { return m_n; }
  long max() const { return static_cast<long>(m_cdf.size()) - 1; }  // n(n+1)/2
  double cdf(long v) const;                                         // P(V <= v)

 private:
  int m_n = 0;
  std::vector<double> m_cdf;
};

}  // namespace attnprof::stats
