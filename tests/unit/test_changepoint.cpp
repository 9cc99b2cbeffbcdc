// stats::detect_change_points on synthetic series: steps found where they are, with their
// size, and none in pure noise.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "harness/stats/changepoint.h"

using namespace attnprof::stats;

namespace {

// Normal noise around `level`, relative sd `noise`, seeded.
std::vector<double> noisy(std::vector<std::pair<int, double>> segments, double noise,
                          unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::vector<double> x;
  for (auto [n, level] : segments) {
    std::normal_distribution<double> d(level, level * noise);
    for (int i = 0; i < n; ++i) x.push_back(d(rng));
  }
  return x;
}

// O(n^2) reference of the E-divisive statistic at tau.
double q_naive(const std::vector<double>& x, std::size_t tau) {
  const double m = tau, k = x.size() - tau;
  double b = 0, wl = 0, wr = 0;
  for (std::size_t i = 0; i < tau; ++i)
    for (std::size_t j = tau; j < x.size(); ++j) b += std::fabs(x[i] - x[j]);
  for (std::size_t i = 0; i < tau; ++i)
    for (std::size_t j = i + 1; j < tau; ++j) wl += std::fabs(x[i] - x[j]);
  for (std::size_t i = tau; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j) wr += std::fabs(x[i] - x[j]);
  return m * k / (m + k) * (2 * b / (m * k) - wl / (m * (m - 1) / 2) - wr / (k * (k - 1) / 2));
}

}  // namespace

TEST_SUITE("stats::changepoint") {
  TEST_CASE("the O(n log n) statistic equals the textbook O(n^2) one") {
    auto x = noisy({{17, 100}, {23, 112}}, 0.03);
    x[5] = x[9];  // ties
    auto best = best_split(x, 3);
    std::size_t arg = 0;
    double q = -1e300;
    for (std::size_t tau = 3; tau + 3 <= x.size(); ++tau)
      if (q_naive(x, tau) > q) q = q_naive(x, tau), arg = tau;
    CHECK(best.tau == arg);
    CHECK(best.q == doctest::Approx(q).epsilon(1e-9));
    CHECK(best.tau == 17);
  }

  TEST_CASE("one step of 10% in 1% noise is found at its index, with its size") {
    auto x = noisy({{30, 1000}, {30, 1100}}, 0.01);
    auto cps = detect_change_points(x);
    REQUIRE(cps.size() == 1);
    CHECK(cps[0].index == 30);
    CHECK(cps[0].relative_change == doctest::Approx(0.10).epsilon(0.02));
    CHECK(cps[0].p_value < 0.001);
    CHECK(cps[0].permutation_p <= 0.05);
  }

  TEST_CASE("two steps (slower, then faster again) are both found") {
    auto x = noisy({{25, 1000}, {20, 1200}, {25, 1000}}, 0.01);
    auto cps = detect_change_points(x);
    REQUIRE(cps.size() == 2);
    CHECK(cps[0].index == 25);
    CHECK(cps[0].relative_change > 0.15);
    CHECK(cps[1].index == 45);
    CHECK(cps[1].relative_change < -0.12);
  }

  TEST_CASE("pure noise gives no change point, for many seeds") {
    int false_alarms = 0;
    for (unsigned seed = 1; seed <= 20; ++seed)
      false_alarms += !detect_change_points(noisy({{60, 1000}}, 0.02, seed)).empty();
    CHECK(false_alarms <= 1);
  }

  TEST_CASE("min_magnitude drops real but small changes") {
    auto x = noisy({{30, 1000}, {30, 1010}}, 0.001);
    CHECK(detect_change_points(x).size() == 1);
    ChangePointSettings s;
    s.min_magnitude = 0.02;
    CHECK(detect_change_points(x, s).empty());
  }

  TEST_CASE("series too short to split, and flat series") {
    CHECK(detect_change_points(std::vector<double>{}).empty());
    CHECK(detect_change_points(std::vector<double>{1, 2, 3, 4, 5}).empty());
    CHECK(detect_change_points(std::vector<double>(40, 5.0)).empty());
  }

  TEST_CASE("the same input and seed give the same answer") {
    // A shift of 20% in 2% noise: found on every run, so there is an answer to compare (one
    // found by neither run would compare nothing).
    auto x = noisy({{30, 1000}, {30, 1200}}, 0.02);
    auto a = detect_change_points(x), b = detect_change_points(x);
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    CHECK(a[0].index == b[0].index);
    CHECK(a[0].index == 30);
    CHECK(a[0].permutation_p == b[0].permutation_p);
    CHECK(a[0].relative_change == b[0].relative_change);
  }

  TEST_CASE("Welch's t-test and the t distribution against known values") {
    CHECK(student_t_cdf(0, 5) == doctest::Approx(0.5));
    CHECK(student_t_cdf(2.015048, 5) == doctest::Approx(0.95).epsilon(1e-5));
    CHECK(student_t_cdf(-2.228139, 10) == doctest::Approx(0.025).epsilon(1e-5));
    // t = -2.4019, df = 8.989; the tail integrated numerically gives p = 0.039803
    std::vector<double> a{1, 2, 3, 4, 5}, b{3, 4, 5, 6, 7, 8};
    CHECK(welch_t_test(a, b) == doctest::Approx(0.039803).epsilon(1e-4));
    CHECK(welch_t_test(std::vector<double>{1}, b) == 1);
    CHECK(welch_t_test(std::vector<double>{2, 2}, std::vector<double>{2, 2}) == 1);
    CHECK(welch_t_test(std::vector<double>{2, 2}, std::vector<double>{3, 3}) == 0);
  }
}
