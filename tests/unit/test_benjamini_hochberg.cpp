// stats::benjamini_hochberg: the step-up adjustment, its cap, monotonicity and NaNs.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "harness/stats/benjamini_hochberg.h"

using namespace attnprof;

TEST_SUITE("stats::benjamini_hochberg") {
  TEST_CASE("step-up adjustment keeps the input order") {
    auto adj = stats::benjamini_hochberg(std::vector<double>{0.01, 0.04, 0.03, 0.005});
    REQUIRE(adj.size() == 4);
    CHECK(adj[0] == doctest::Approx(0.02));
    CHECK(adj[1] == doctest::Approx(0.04));
    CHECK(adj[2] == doctest::Approx(0.04));
    CHECK(adj[3] == doctest::Approx(0.02));
  }
  TEST_CASE("capped at 1 and monotone; NaN passes through and does not count") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto adj = stats::benjamini_hochberg(std::vector<double>{0.9, nan, 0.02, 0.8});
    CHECK(adj[0] == doctest::Approx(0.9));
    CHECK(std::isnan(adj[1]));
    CHECK(adj[2] == doctest::Approx(0.06));
    CHECK(adj[3] == doctest::Approx(0.9));  // 0.8 * 3/2 = 1.2, then min with the larger rank
  }
}
