// stats::median_ci: ranks from the binomial, small samples, and coverage on skewed data.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "harness/stats/median_ci.h"
#include "harness/stats/rng.h"

using namespace attnprof;

TEST_SUITE("stats::median_ci") {
  TEST_CASE("ranks and coverage from the binomial") {
    auto r = stats::median_ci_ranks(100, 0.95);
    CHECK(r.low_rank == 40);
    CHECK(r.high_rank == 61);
    CHECK(r.level == doctest::Approx(0.9647998).epsilon(1e-6));
    auto r6 = stats::median_ci_ranks(6, 0.95);
    CHECK(r6.low_rank == 1);
    CHECK(r6.high_rank == 6);
    CHECK(r6.level == doctest::Approx(0.96875));
  }
  TEST_CASE("too few samples: [min, max] with its true, lower coverage") {
    auto r = stats::median_ci_ranks(5, 0.95);
    CHECK(r.low_rank == 1);
    CHECK(r.high_rank == 5);
    CHECK(r.level == doctest::Approx(0.9375));
  }
  TEST_CASE("covers the true median of a skewed distribution at least as often as promised") {
    // Lognormal(0, 0.5): median exactly 1. 2000 intervals of 50 samples, fixed seed.
    stats::Rng rng(7);
    int covered = 0, trials = 2000;
    double promised = stats::median_ci_ranks(50, 0.95).level;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> xs;
      for (int i = 0; i < 50; ++i) {
        xs.push_back(std::exp(0.5 * rng.normal()));
      }
      covered += stats::median_ci(xs, 0.95).contains(1.0);
    }
    double rate = static_cast<double>(covered) / trials;
    CHECK(rate > promised - 0.015);
    CHECK(rate < promised + 0.015);
  }
}
