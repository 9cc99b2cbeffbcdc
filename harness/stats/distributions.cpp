// The normal, binomial and Wilcoxon signed-rank distribution functions the tests and
// intervals need (distributions.h).
#include "harness/stats/distributions.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnprof::stats {

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double normal_quantile(double p) {
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  // Acklam's coefficients; relative error below 1.2e-9 before refinement.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double lo = 0.02425, hi = 1 - lo;
  double x;
  if (p < lo) {
    double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= hi) {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // One Halley step against the erfc-based CDF.
  double e = normal_cdf(x) - p;
  double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double binomial_cdf(long k, long n, double p) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  if (p <= 0) return 1;
  if (p >= 1) return 0;
  // Sum the pmf terms in log space from the mode outwards would be faster; n is at most a few
  // thousand samples here, so a straight sum of exp(log pmf) is both exact enough and simple.
  const double lp = std::log(p), lq = std::log1p(-p);
  const double lgn = std::lgamma(static_cast<double>(n) + 1);
  double sum = 0;
  for (long i = 0; i <= k; ++i) {
    double lpmf = lgn - std::lgamma(static_cast<double>(i) + 1) -
                  std::lgamma(static_cast<double>(n - i) + 1) + i * lp + (n - i) * lq;
    sum += std::exp(lpmf);
  }
  return sum < 1 ? sum : 1;
}

SignedRankDistribution::SignedRankDistribution(int n) : m_n(n < 0 ? 0 : n) {
  const auto top = static_cast<std::size_t>(m_n) * static_cast<std::size_t>(m_n + 1) / 2;
  // Probabilities rather than counts: the counts reach 2^n, beyond exact integers for n > 53.
  std::vector<double> pmf(top + 1, 0.0);
  pmf[0] = 1;
  std::size_t reach = 0;  // largest v with nonzero probability so far
  for (int k = 1; k <= m_n; ++k) {
    const auto rank = static_cast<std::size_t>(k);
    reach += rank;
    for (std::size_t v = reach; v >= rank; --v) pmf[v] = (pmf[v] + pmf[v - rank]) / 2;
    for (std::size_t v = 0; v < rank; ++v) pmf[v] /= 2;
  }
  m_cdf.resize(top + 1);
  double sum = 0;
  for (std::size_t v = 0; v <= top; ++v) m_cdf[v] = sum += pmf[v];
}

double SignedRankDistribution::cdf(long v) const {
  if (v < 0) return 0;
  if (v >= max()) return 1;
  return std::min(1.0, m_cdf[static_cast<std::size_t>(v)]);
}

}  // namespace attnprof::stats
