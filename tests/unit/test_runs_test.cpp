// stats::runs_test: stretches against shuffled values, and too few values for a claim.
#include <doctest/doctest.h>

#include <vector>

#include "harness/stats/rng.h"
#include "harness/stats/runs_test.h"

using namespace attnprof;

TEST_SUITE("stats::runs_test") {
  TEST_CASE("stretches have few runs; shuffled values do not") {
    std::vector<double> stretches;
    for (int i = 0; i < 40; ++i) stretches.push_back(i < 20 ? 1.0 + i * 1e-3 : 2.0 + i * 1e-3);
    const auto s = stats::runs_test(stretches);
    CHECK(s.runs == 2);
    CHECK(s.above == 20);
    CHECK(s.below == 20);
    CHECK(s.expected == doctest::Approx(21));
    CHECK(s.p_fewer < 1e-8);

    stats::Rng rng(7);
    int flagged = 0;
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<double> noise;
      for (int i = 0; i < 32; ++i) noise.push_back(rng.normal());
      flagged += stats::runs_test(noise).p_fewer < 0.001;
    }
    CHECK(flagged <= 10);  // about 2 expected at p < 0.001
  }

  TEST_CASE("too few values on a side: no claim") {
    const std::vector<double> few = {1, 2, 3, 4, 5, 6};
    CHECK(stats::runs_test(few).p_fewer == 1);
    CHECK(stats::runs_test({}).runs == 0);
  }
}
