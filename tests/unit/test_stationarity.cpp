// stats::check_stationary: a drifting warm-up against its settled tail.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "harness/stats/stationarity.h"

using namespace attnprof;

TEST_SUITE("stats::stationarity") {
  TEST_CASE("a drifting warm-up is not stationary; its settled tail is") {
    std::vector<double> xs;
    for (int i = 0; i < 64; ++i) xs.push_back(200 - i);  // still speeding up
    auto drifting = stats::check_stationary(xs, 16, 0.005);
    CHECK_FALSE(drifting.stationary);
    CHECK(drifting.rel_diff == doctest::Approx(16.0 / 160.5));
    for (int i = 0; i < 32; ++i) xs.push_back(100 + (i % 3));  // settled, small jitter
    auto settled = stats::check_stationary(xs, 16, 0.005);
    CHECK(settled.stationary);
    CHECK(settled.rel_diff <= 0.005);
  }
  TEST_CASE("fewer than two windows: not stationary") {
    std::vector<double> xs(31, 1.0);
    auto s = stats::check_stationary(xs, 16, 0.5);
    CHECK_FALSE(s.stationary);
    CHECK(std::isnan(s.rel_diff));
  }
}
