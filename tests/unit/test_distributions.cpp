// stats::distributions: the normal and binomial functions against tables and each other.
#include <doctest/doctest.h>

#include <initializer_list>

#include "harness/stats/distributions.h"

using namespace attnprof;

TEST_SUITE("stats::distributions") {
  TEST_CASE("normal cdf and quantile match tables and invert each other") {
    CHECK(stats::normal_cdf(0) == doctest::Approx(0.5));
    CHECK(stats::normal_cdf(1.96) == doctest::Approx(0.9750021048517795).epsilon(1e-12));
    CHECK(stats::normal_quantile(0.975) == doctest::Approx(1.959963984540054).epsilon(1e-12));
    CHECK(stats::normal_quantile(0.005) == doctest::Approx(-2.5758293035489).epsilon(1e-12));
    for (double p : {1e-9, 0.01, 0.3, 0.5, 0.77, 0.999999})
      CHECK(stats::normal_cdf(stats::normal_quantile(p)) == doctest::Approx(p).epsilon(1e-10));
  }
  TEST_CASE("binomial cdf is exact for small n and stable for large n") {
    CHECK(stats::binomial_cdf(3, 10, 0.5) == doctest::Approx(176.0 / 1024));
    CHECK(stats::binomial_cdf(-1, 10, 0.5) == 0);
    CHECK(stats::binomial_cdf(10, 10, 0.5) == 1);
    // 2000 trials: 0.5^2000 underflows a double; the log-space sum must not.
    CHECK(stats::binomial_cdf(999, 2000, 0.5) == doctest::Approx(0.4910807).epsilon(1e-5));
  }
}
