// stats::wilcoxon_signed_rank: the exact null distribution, R's examples, zeros and ties.
#include <doctest/doctest.h>

#include <vector>

#include "harness/stats/distributions.h"
#include "harness/stats/rng.h"
#include "harness/stats/signed_rank.h"

using namespace attnprof;

namespace {
// R's example for wilcox.test (Hollander & Wolfe, depression scores before and after a
// tranquilizer, x - y): V = 40, one-sided p = 10/512, two-sided 0.03906.
const std::vector<double> depression = {0.952, -0.147, 1.022,  0.430, 0.620,
                                        0.590, 0.490,  -0.080, 0.010};
}  // namespace

TEST_SUITE("stats::signed_rank") {
  TEST_CASE("exact null distribution: counts of sign patterns, by hand") {
    // n = 3: V takes 0,1,2,3,3,4,5,6 over the 8 sign patterns.
    stats::SignedRankDistribution d3(3);
    CHECK(d3.max() == 6);
    CHECK(d3.cdf(-1) == 0);
    CHECK(d3.cdf(0) == 0.125);
    CHECK(d3.cdf(2) == 0.375);
    CHECK(d3.cdf(3) == 0.625);
    CHECK(d3.cdf(6) == 1);
    // n = 9: 10 of the 512 patterns have V <= 5 (sums 0,1,2,3,3,4,4,5,5,5).
    CHECK(stats::SignedRankDistribution(9).cdf(5) == doctest::Approx(10.0 / 512).epsilon(1e-12));
    // Symmetric about n(n+1)/4 for a large n too.
    stats::SignedRankDistribution d40(40);
    CHECK(d40.cdf(409) == doctest::Approx(1 - d40.cdf(410)).epsilon(1e-12));
  }
  TEST_CASE("R's example: V = 40, exact one- and two-sided p") {
    auto r = stats::wilcoxon_signed_rank(depression);
    CHECK(r.exact);
    CHECK(r.n == 9);
    CHECK(r.v == 40);
    CHECK(r.p_greater == doctest::Approx(0.01953125).epsilon(1e-12));
    CHECK(r.p_less == doctest::Approx(0.986328125).epsilon(1e-12));
    CHECK(r.p_two_sided == doctest::Approx(0.0390625).epsilon(1e-12));
  }
  TEST_CASE("zeros are dropped and ties ranked on average: normal approximation as R") {
    // Nonzero n = 11; |d| ties: three 0.5s, three 1s, two 2s; V = 55.5,
    // sd = sqrt(11*12*23/24 - (24 + 24 + 6)/48) = 11.1971; R: p = 0.04944.
    const std::vector<double> d = {0.5, -0.5, 1, 1, 2, 0, -2, 3, 1.5, 0.5, 2.5, 1};
    auto r = stats::wilcoxon_signed_rank(d);
    CHECK_FALSE(r.exact);
    CHECK(r.n == 11);
    CHECK(r.v == 55.5);
    CHECK(r.z == doctest::Approx((55.5 - 33) / 11.197097838279346).epsilon(1e-12));
    CHECK(r.p_two_sided == doctest::Approx(0.04943798824726642).epsilon(1e-9));
    CHECK(r.p_greater == doctest::Approx(0.02471899412363321).epsilon(1e-9));
    CHECK(r.p_less == doctest::Approx(0.9800171715553235).epsilon(1e-9));
  }
  TEST_CASE("no nonzero difference: no evidence, p = 1") {
    auto r = stats::wilcoxon_signed_rank(std::vector<double>{0, 0, 0});
    CHECK(r.n == 0);
    CHECK(r.p_two_sided == 1);
    CHECK(stats::wilcoxon_signed_rank(std::vector<double>{}).p_two_sided == 1);
  }
  TEST_CASE("every difference positive: p = 2^-n exactly, the smallest possible") {
    auto r = stats::wilcoxon_signed_rank(std::vector<double>{3, 1, 4, 1.5, 9, 2.6, 5, 3.5});
    CHECK(r.p_greater == 1.0 / 256);
    CHECK(r.p_two_sided == 2.0 / 256);
  }
  TEST_CASE("under the null, p < 0.05 about 5% of the time, exact and normal sizes alike") {
    stats::Rng rng(23);
    for (int n : {12, 80}) {
      int rejections = 0, trials = 2000;
      for (int t = 0; t < trials; ++t) {
        std::vector<double> d;
        for (int i = 0; i < n; ++i) d.push_back(rng.normal());
        rejections += stats::wilcoxon_signed_rank(d).p_two_sided < 0.05;
      }
      CAPTURE(n);
      CHECK(rejections > 0.03 * trials);
      CHECK(rejections < 0.065 * trials);
    }
  }
}
