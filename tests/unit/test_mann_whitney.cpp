// stats::mann_whitney: separation, ties, degenerate samples and its rate under the null.
#include <doctest/doctest.h>

#include <vector>

#include "harness/stats/mann_whitney.h"
#include "harness/stats/rng.h"

using namespace attnprof;

TEST_SUITE("stats::mann_whitney") {
  TEST_CASE("complete separation") {
    auto r = stats::mann_whitney(std::vector<double>{1, 2, 3, 4, 5},
                                 std::vector<double>{6, 7, 8, 9, 10});
    CHECK(r.u == 25);
    CHECK(r.p_greater == doctest::Approx(0.00609289).epsilon(1e-6));
    CHECK(r.p_two_sided == doctest::Approx(0.01218578).epsilon(1e-6));
    CHECK(r.p_less > 0.99);
  }
  TEST_CASE("ties use average ranks and the tie-corrected variance") {
    auto r = stats::mann_whitney(std::vector<double>{1, 2, 2, 3, 5, 7},
                                 std::vector<double>{2, 3, 3, 4, 8, 9, 9});
    CHECK(r.u == 31);
    CHECK(r.p_greater == doctest::Approx(0.08468384).epsilon(1e-6));
    CHECK(r.p_two_sided == doctest::Approx(0.16936768).epsilon(1e-6));
  }
  TEST_CASE("all tied, or an empty side: p = 1") {
    CHECK(
        stats::mann_whitney(std::vector<double>{3, 3}, std::vector<double>{3, 3, 3}).p_two_sided ==
        1);
    CHECK(stats::mann_whitney(std::vector<double>{}, std::vector<double>{1}).p_two_sided == 1);
  }
  TEST_CASE("under the null, p < 0.05 about 5% of the time") {
    stats::Rng rng(17);
    int rejections = 0, trials = 2000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> x, y;
      for (int i = 0; i < 30; ++i) x.push_back(rng.normal());
      for (int i = 0; i < 40; ++i) y.push_back(rng.normal());
      rejections += stats::mann_whitney(x, y).p_two_sided < 0.05;
    }
    CHECK(rejections > 0.035 * trials);
    CHECK(rejections < 0.065 * trials);
  }
}
