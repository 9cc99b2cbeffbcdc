// Hodges-Lehmann shift and ratio estimates, two-sample and one-sample, with their rank-test
// confidence intervals (hodges_lehmann.h).
#include "harness/stats/hodges_lehmann.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "harness/stats/distributions.h"
#include "harness/stats/quantile.h"
#include "harness/stats/signed_rank.h"

namespace attnprof::stats {

namespace {

// The pairwise differences d_ij = y_j - x_i of two ascending samples, queried by rank.
class PairwiseDifferences {
 public:
  PairwiseDifferences(std::vector<double> x, std::vector<double> y)
      : m_x(std::move(x)), m_y(std::move(y)) {}

  std::uint64_t size() const { return std::uint64_t{m_x.size()} * m_y.size(); }

  // #{(i, j): y_j - x_i <= t}. For fixed i the difference grows with j, and the cut-off j only
  // moves right as x_i grows, so one pass suffices. The predicate is evaluated exactly as the
  // differences are computed, so rounding cannot make the count and the values disagree.
  std::uint64_t count_le(double t) const {
    std::uint64_t count = 0;
    std::size_t j = 0;
    for (double xi : m_x) {
      while (j < m_y.size() && m_y[j] - xi <= t) ++j;
      count += j;
    }
    return count;
  }

  // Largest difference <= t (an actual d_ij, so results are values of the data).
  double largest_le(double t) const {
    double best = -std::numeric_limits<double>::infinity();
    std::size_t j = 0;
    for (double xi : m_x) {
      while (j < m_y.size() && m_y[j] - xi <= t) ++j;
      if (j > 0) best = std::max(best, m_y[j - 1] - xi);
    }
    return best;
  }

  // The k-th smallest difference, 1-based.
  double kth(std::uint64_t k) const {
    double lo = m_y.front() - m_x.back(), hi = m_y.back() - m_x.front();
    if (count_le(lo) >= k) return lo;
    // Invariant: count_le(lo) < k <= count_le(hi). 200 halvings take any double range down to
    // adjacent values; the answer is then the largest difference not above hi.
    for (int it = 0; it < 200; ++it) {
      double mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) break;
      (count_le(mid) >= k ? hi : lo) = mid;
    }
    return largest_le(hi);
  }

 private:
  std::vector<double> m_x, m_y;
};

// Both intervals are [s_(k), s_(total-k+1)] of `total` ordered statistics (pairwise differences,
// Walsh averages) where the rank statistic counting those below the true center is symmetric
// about total/2 with standard deviation `sd`. The normal approximation with a continuity
// correction gives the largest k with P(S <= k-1) <= (1-level)/2; k is at least 1 (the widest
// interval) and at most the middle rank.
struct RankChoice {
  std::uint64_t k = 1;
  double level = 0;
};
RankChoice normal_ranks(std::uint64_t total, double sd, double level) {
  const double mean = static_cast<double>(total) / 2;
  const double z = normal_quantile(1 - (1 - level) / 2);
  double w = std::floor(mean - 0.5 - z * sd);  // k - 1
  w = std::clamp(w, 0.0, std::floor((static_cast<double>(total) - 1) / 2));
  return {static_cast<std::uint64_t>(w) + 1, 1 - 2 * normal_cdf((w + 0.5 - mean) / sd)};
}

}  // namespace

ShiftEstimate hodges_lehmann(std::span<const double> x, std::span<const double> y, double level) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (x.empty() || y.empty()) return {nan, {nan, nan, 0}};
  PairwiseDifferences d(sorted_copy(x), sorted_copy(y));
  const std::uint64_t total = d.size();
  ShiftEstimate est;
  est.shift = total % 2 ? d.kth(total / 2 + 1) : (d.kth(total / 2) + d.kth(total / 2 + 1)) / 2;
  // Moses interval: ranks from the Mann-Whitney U's null distribution, U ~ N(nm/2, sd^2).
  const double n = static_cast<double>(x.size()), m = static_cast<double>(y.size());
  const RankChoice r = normal_ranks(total, std::sqrt(n * m * (n + m + 1) / 12), level);
  est.ci.low = d.kth(r.k);
  est.ci.high = d.kth(total - r.k + 1);
  est.ci.level = r.level;
  return est;
}

ShiftEstimate hodges_lehmann_one_sample(std::span<const double> d, double level) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (d.empty()) return {nan, {nan, nan, 0}};
  std::vector<double> walsh;
  walsh.reserve(d.size() * (d.size() + 1) / 2);
  for (std::size_t i = 0; i < d.size(); ++i)
    for (std::size_t j = i; j < d.size(); ++j) walsh.push_back((d[i] + d[j]) / 2);
  std::sort(walsh.begin(), walsh.end());
  const std::uint64_t total = walsh.size();
  ShiftEstimate est;
  est.shift = median_sorted(walsh);
  const int n = static_cast<int>(d.size());
  RankChoice r;
  if (n < signed_rank_exact_below) {
    // Walk up the exact lower tail: the largest k with P(V <= k-1) <= (1-level)/2.
    const SignedRankDistribution dist(n);
    const double tail = (1 - level) / 2;
    r.k = 1;
    while (2 * (r.k + 1) <= total + 1 && dist.cdf(static_cast<long>(r.k)) <= tail) ++r.k;
    r.level = 1 - 2 * dist.cdf(static_cast<long>(r.k) - 1);
  } else {
    const double nn = n;
    r = normal_ranks(total, std::sqrt(nn * (nn + 1) * (2 * nn + 1) / 24), level);
  }
  est.ci.low = walsh[r.k - 1];
  est.ci.high = walsh[total - r.k];
  est.ci.level = r.level;
  return est;
}

ShiftEstimate hodges_lehmann_ratio(std::span<const double> x, std::span<const double> y,
                                   double level) {
  std::vector<double> lx, ly;
  lx.reserve(x.size());
  ly.reserve(y.size());
  for (double v : x) lx.push_back(std::log(v));
  for (double v : y) ly.push_back(std::log(v));
  ShiftEstimate est = hodges_lehmann(lx, ly, level);
  return {std::exp(est.shift), {std::exp(est.ci.low), std::exp(est.ci.high), est.ci.level}};
}

}  // namespace attnprof::stats
