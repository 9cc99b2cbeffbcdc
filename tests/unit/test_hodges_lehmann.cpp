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
}
