// stats::student_t: quantiles against published tables; the cdf inverts them.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

#include "harness/stats/distributions.h"
#include "harness/stats/student_t.h"

using namespace attnprof;

TEST_SUITE("stats::student_t") {
  TEST_CASE("quantiles match published tables") {
    CHECK(stats::student_t_quantile(0.975, 1) == doctest::Approx(12.7062).epsilon(1e-4));
    CHECK(stats::student_t_quantile(0.995, 4) == doctest::Approx(4.6041).epsilon(1e-4));
    CHECK(stats::student_t_quantile(0.995, 29) == doctest::Approx(2.7564).epsilon(1e-4));
    CHECK(stats::student_t_quantile(0.95, 10) == doctest::Approx(1.8125).epsilon(1e-4));
    CHECK(stats::student_t_quantile(0.025, 4) == doctest::Approx(-2.7764).epsilon(1e-4));
  }
  TEST_CASE("the cdf inverts the quantile and tends to the normal") {
    for (double df : {1.0, 3.0, 9.0, 40.0})
      for (double p : {0.01, 0.3, 0.5, 0.9, 0.999})
        CHECK(stats::student_t_cdf(stats::student_t_quantile(p, df), df) ==
              doctest::Approx(p).epsilon(1e-9));
    CHECK(stats::student_t_cdf(1.96, 1e6) ==
          doctest::Approx(stats::normal_cdf(1.96)).epsilon(1e-6));
    CHECK(stats::student_t_cdf(0, 5) == 0.5);
    CHECK(std::isnan(stats::student_t_cdf(1, 0)));
  }
}
