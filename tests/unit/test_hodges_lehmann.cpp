// stats::hodges_lehmann: estimates and interval ranks against hand, brute force and R.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/stats/hodges_lehmann.h"
#include "harness/stats/rng.h"

using namespace attnprof;

namespace {
// Brute force: sort all n*m differences.
std::vector<double> all_differences(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> d;
  for (double xi : x)
    for (double yj : y) d.push_back(yj - xi);
  std::sort(d.begin(), d.end());
  return d;
}
}  // namespace

TEST_SUITE("stats::hodges_lehmann") {
  TEST_CASE("median of pairwise differences, by hand") {
    // Differences: 3 2 1 5 4 3 -> 1 2 3 3 4 5, median 3.
    auto est = stats::hodges_lehmann(std::vector<double>{1, 2, 3}, std::vector<double>{4, 6});
    CHECK(est.shift == 3);
  }
  TEST_CASE("matches brute force, ties included, at the estimate and the interval's ranks") {
    stats::Rng rng(11);
    for (int round = 0; round < 20; ++round) {
      std::vector<double> x, y;
      int n = 5 + static_cast<int>(rng.below(40)), m = 5 + static_cast<int>(rng.below(40));
      // Rounded values produce many ties, the hard case for the bisection.
      for (int i = 0; i < n; ++i) x.push_back(std::round(rng.normal() * 4) / 4);
      for (int j = 0; j < m; ++j) y.push_back(std::round((rng.normal() + 0.3) * 4) / 4);
      auto d = all_differences(x, y);
      auto N = d.size();
      double expected = N % 2 ? d[N / 2] : (d[N / 2 - 1] + d[N / 2]) / 2;
      auto est = stats::hodges_lehmann(x, y, 0.95);
      CHECK(est.shift == expected);
      // The interval's ends are order statistics of the differences, symmetric in rank.
      auto lo = std::lower_bound(d.begin(), d.end(), est.ci.low) - d.begin();
      auto hi = std::upper_bound(d.begin(), d.end(), est.ci.high) - d.begin();
      CHECK(std::binary_search(d.begin(), d.end(), est.ci.low));
      CHECK(std::binary_search(d.begin(), d.end(), est.ci.high));
      CHECK(lo <= static_cast<long>(N / 2));
      CHECK(hi >= static_cast<long>(N / 2));
    }
  }
  TEST_CASE("Moses interval ranks for n = m = 10 at 95%") {
    // Normal approximation: w = floor(50 - 0.5 - 1.96 * sqrt(175)) = 23, ranks 24 and 77
    // (the exact table gives 24 too).
    std::vector<double> x, y;
    for (int i = 0; i < 10; ++i) x.push_back(0);
    for (int j = 0; j < 10; ++j) y.push_back(j * 10);  // differences: each multiple of 10 ten times
    auto est = stats::hodges_lehmann(x, y, 0.95);
    CHECK(est.ci.low == 20);   // 24th smallest of {0 x10, 10 x10, 20 x10, ...}
    CHECK(est.ci.high == 70);  // 77th smallest
  }
  TEST_CASE("on log times: a 5% slowdown reads as a ratio of 1.05") {
    stats::Rng rng(5);
    std::vector<double> a, b;
    for (int i = 0; i < 300; ++i) a.push_back(1e5 * std::exp(0.02 * rng.normal()));
    for (int i = 0; i < 300; ++i) b.push_back(1.05e5 * std::exp(0.02 * rng.normal()));
    auto est = stats::hodges_lehmann_ratio(a, b);
    CHECK(est.shift == doctest::Approx(1.05).epsilon(0.005));
    CHECK(est.ci.contains(1.05));
    CHECK(est.ci.high - est.ci.low < 0.01);
    CHECK(est.ci.level == doctest::Approx(0.95).epsilon(0.01));
  }
  TEST_CASE("one sample: R's wilcox.test(conf.int = TRUE) example, estimate and exact interval") {
    // (x - y) of R's example: (pseudo)median 0.46, 95% interval 0.010 to 0.786 (the 6th and
    // 40th of 45 Walsh averages; coverage 1 - 2 P(V <= 5) = 1 - 2 * 10/512).
    const std::vector<double> d = {0.952, -0.147, 1.022, 0.430, 0.620, 0.590, 0.490, -0.080, 0.010};
    auto est = stats::hodges_lehmann_one_sample(d, 0.95);
    CHECK(est.shift == doctest::Approx(0.46).epsilon(1e-12));
    CHECK(est.ci.low == doctest::Approx(0.010).epsilon(1e-12));
    CHECK(est.ci.high == doctest::Approx(0.786).epsilon(1e-12));
    CHECK(est.ci.level == doctest::Approx(1 - 20.0 / 512).epsilon(1e-12));
    // 99%: the 2nd and 44th averages, coverage 1 - 2/256.
    auto wide = stats::hodges_lehmann_one_sample(d, 0.99);
    CHECK(wide.ci.low == doctest::Approx(-0.1135).epsilon(1e-12));
    CHECK(wide.ci.high == doctest::Approx(0.987).epsilon(1e-12));
    CHECK(wide.ci.level == doctest::Approx(1 - 2.0 / 256).epsilon(1e-12));
  }
  TEST_CASE(
      "one sample: a second exact example, n = 12, derived by enumerating 4096 sign patterns") {
    const std::vector<double> d = {-0.31, 0.52, 1.07,  -0.12, 0.88, 0.25,
                                   1.41,  0.63, -0.05, 0.77,  0.94, 0.19};
    auto est = stats::hodges_lehmann_one_sample(d, 0.99);
    CHECK(est.shift == doctest::Approx(0.515).epsilon(1e-12));
    CHECK(est.ci.low == doctest::Approx(-0.03).epsilon(1e-12));
    CHECK(est.ci.high == doctest::Approx(1.005).epsilon(1e-12));
    CHECK(est.ci.level == doctest::Approx(0.99072265625).epsilon(1e-12));
  }
  TEST_CASE("one sample: too few values for the level give [min, max] and the true coverage") {
    // n = 5 at 99%: even [min, max] covers only 1 - 2/32.
    auto est = stats::hodges_lehmann_one_sample(std::vector<double>{4, 1, 3, 2, 5}, 0.99);
    CHECK(est.shift == 3);
    CHECK(est.ci.low == 1);
    CHECK(est.ci.high == 5);
    CHECK(est.ci.level == 1 - 2.0 / 32);
    CHECK(std::isnan(stats::hodges_lehmann_one_sample(std::vector<double>{}).shift));
  }
  TEST_CASE("one sample: the interval covers the true center at its level, exact and normal") {
    stats::Rng rng(31);
    for (int n : {20, 70}) {
      int covered = 0, trials = 2000;
      double level = 0;
      for (int t = 0; t < trials; ++t) {
        std::vector<double> d;
        for (int i = 0; i < n; ++i) d.push_back(0.3 + rng.normal());
        auto est = stats::hodges_lehmann_one_sample(d, 0.95);
        covered += est.ci.contains(0.3);
        level = est.ci.level;
      }
      CAPTURE(n);
      CHECK(level >= 0.95);
      CHECK(level < 0.96);
      CHECK(covered > 0.935 * trials);
      CHECK(covered < 0.97 * trials);
    }
  }
}
