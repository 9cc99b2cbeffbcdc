// stats::quantile and stats::summarize: type-7 quantiles, MAD's robustness, the summary.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "harness/stats/quantile.h"
#include "harness/stats/summary.h"

using namespace attnprof;

TEST_SUITE("stats::quantile") {
  TEST_CASE("quantiles interpolate between closest ranks (type 7)") {
    std::vector<double> v = {4, 1, 3, 2};
    CHECK(stats::quantile(v, 0.25) == doctest::Approx(1.75));
    CHECK(stats::quantile(v, 0) == 1);
    CHECK(stats::quantile(v, 1) == 4);
    CHECK(stats::median(v) == 2.5);
    CHECK(stats::median(std::vector<double>{5, 1, 9}) == 5);
    CHECK(std::isnan(stats::median(std::vector<double>{})));
  }
  TEST_CASE("MAD ignores a wild outlier that moves the standard deviation") {
    CHECK(stats::mad(std::vector<double>{1, 1, 2, 2, 4, 6, 9}) == 1);
    CHECK(stats::mad(std::vector<double>{1, 1, 2, 2, 4, 6, 9000}) == 1);
  }
}

TEST_SUITE("stats::summary") {
  TEST_CASE("summary of 1..100") {
    std::vector<double> v;
    for (int i = 100; i >= 1; --i) v.push_back(i);
    core::Summary s = stats::summarize(v);
    CHECK(s.n == 100);
    CHECK(s.median_ns == 50.5);
    CHECK(s.mean_ns == 50.5);
    CHECK(s.q1_ns == doctest::Approx(25.75));
    CHECK(s.q3_ns == doctest::Approx(75.25));
    CHECK(s.min_ns == 1);
    CHECK(s.max_ns == 100);
    CHECK(s.ci_low_ns == 40);  // ranks 40 and 61 at 95% for n = 100
    CHECK(s.ci_high_ns == 61);
    CHECK(s.ci_level == doctest::Approx(0.9648).epsilon(1e-4));
    CHECK_FALSE(s.converged);
  }
  TEST_CASE("empty input gives n = 0") {
    CHECK(stats::summarize(std::vector<double>{}).n == 0);
  }
}
