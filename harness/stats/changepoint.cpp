// Change points in a series (changepoint.h): E-divisive means proposes splits, a permutation
// test accepts them, and a merge step drops those that fail a Welch t-test or are too small.
#include "harness/stats/changepoint.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace attnprof::stats {

namespace {

// Counts and sums of values by rank, for sum_j |x - x_j| over a changing set in O(log n).
class RankSums {
 public:
  explicit RankSums(std::size_t n) : m_cnt(n + 1, 0), m_sum(n + 1, 0.0) {}
  void add(std::size_t rank, double v, int sign) {
    m_total_cnt += sign;
    m_total_sum += sign * v;
    for (std::size_t i = rank + 1; i < m_cnt.size(); i += i & (~i + 1)) {
      m_cnt[i] += sign;
      m_sum[i] += sign * v;
    }
  }
  // sum over the set of |v - x_j|, v having rank `rank` (ties contribute 0 either way).
  double abs_dev(std::size_t rank, double v) const {
    long c = 0;
    double s = 0;
    for (std::size_t i = rank + 1; i > 0; i -= i & (~i + 1)) {
      c += m_cnt[i];
      s += m_sum[i];
    }
    return (v * c - s) + ((m_total_sum - s) - v * (m_total_cnt - c));
  }

 private:
  std::vector<long> m_cnt;
  std::vector<double> m_sum;
  long m_total_cnt = 0;
  double m_total_sum = 0;
};

// x with the rank of each value, so permutations reuse the ranks.
Split best_split_ranked(const std::vector<std::pair<double, std::size_t>>& xr, int min_segment) {
  const std::size_t n = xr.size();
  Split best;
  if (n < 2 * static_cast<std::size_t>(min_segment)) return best;
  RankSums left(n), right(n);
  double w_right = 0;
  for (const auto& [v, r] : xr) {
    w_right += right.abs_dev(r, v);
    right.add(r, v, +1);
  }
  double w_left = 0, between = 0;
  for (std::size_t tau = 1; tau < n; ++tau) {
    const auto& [v, r] = xr[tau - 1];
    right.add(r, v, -1);
    const double d_right = right.abs_dev(r, v), d_left = left.abs_dev(r, v);
    w_right -= d_right;
    between += d_right - d_left;
    w_left += d_left;
    left.add(r, v, +1);
    const double m = static_cast<double>(tau), k = static_cast<double>(n - tau);
    if (tau < static_cast<std::size_t>(min_segment) ||
        n - tau < static_cast<std::size_t>(min_segment))
      continue;
    const double e =
        2 * between / (m * k) - w_left / (m * (m - 1) / 2) - w_right / (k * (k - 1) / 2);
    const double q = m * k / (m + k) * e;
    if (best.tau == 0 || q > best.q) best = {tau, q};
  }
  return best;
}

std::vector<std::pair<double, std::size_t>> with_ranks(std::span<const double> x) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return x[a] < x[b]; });
  std::vector<std::pair<double, std::size_t>> xr(x.size());
  for (std::size_t r = 0; r < order.size(); ++r) xr[order[r]] = {x[order[r]], r};
  return xr;
}

double mean(std::span<const double> x) {
  return x.empty() ? 0 : std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

}  // namespace

Split best_split(std::span<const double> x, int min_segment) {
  return best_split_ranked(with_ranks(x), std::max(2, min_segment));
}

double welch_t_test(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || b.size() < 2) return 1;
  const double ma = mean(a), mb = mean(b);
  auto var = [](std::span<const double> x, double m) {
    double s = 0;
    for (double v : x) s += (v - m) * (v - m);
    return s / static_cast<double>(x.size() - 1);
  };
  const double va = var(a, ma) / a.size(), vb = var(b, mb) / b.size();
  if (va + vb == 0) return ma == mb ? 1 : 0;
  const double t = (ma - mb) / std::sqrt(va + vb);
  const double df = (va + vb) * (va + vb) / (va * va / (a.size() - 1) + vb * vb / (b.size() - 1));
  return 2 * student_t_cdf(-std::fabs(t), df);
}

std::vector<ChangePoint> detect_change_points(std::span<const double> x,
                                              const ChangePointSettings& s) {
  const int min_seg = std::max(2, s.min_segment);
  std::mt19937_64 rng(s.seed);
  struct Found {
    std::size_t index;
    double permutation_p;
  };
  std::vector<Found> found;
  std::vector<std::size_t> bounds = {0, x.size()};  // sorted segment boundaries
  // Split step: propose the strongest split among all segments, keep it if it survives the
  // permutation test, stop at the first that does not.
  for (;;) {
    Split best;
    std::size_t seg_begin = 0, seg_end = 0;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      auto seg = x.subspan(bounds[i], bounds[i + 1] - bounds[i]);
      Split sp = best_split(seg, min_seg);
      if (sp.tau != 0 && (best.tau == 0 || sp.q > best.q)) {
        best = sp;
        seg_begin = bounds[i];
        seg_end = bounds[i + 1];
      }
    }
    if (best.tau == 0) break;
    auto xr = with_ranks(x.subspan(seg_begin, seg_end - seg_begin));
    int as_extreme = 0;
    for (int p = 0; p < s.permutations; ++p) {
      std::shuffle(xr.begin(), xr.end(), rng);
      if (best_split_ranked(xr, min_seg).q >= best.q) ++as_extreme;
    }
    const double p_value = (as_extreme + 1.0) / (s.permutations + 1.0);
    if (p_value > s.permutation_alpha) break;
    found.push_back({seg_begin + best.tau, p_value});
    bounds.insert(std::upper_bound(bounds.begin(), bounds.end(), seg_begin + best.tau),
                  seg_begin + best.tau);
  }
  std::sort(found.begin(), found.end(), [](auto& a, auto& b) { return a.index < b.index; });

  // Merge step: drop the weakest change point until every one passes the t-test and magnitude.
  auto describe = [&](std::size_t i) {
    const std::size_t lo = i == 0 ? 0 : found[i - 1].index;
    const std::size_t hi = i + 1 == found.size() ? x.size() : found[i + 1].index;
    auto before = x.subspan(lo, found[i].index - lo),
         after = x.subspan(found[i].index, hi - found[i].index);
    ChangePoint cp;
    cp.index = found[i].index;
    cp.before_mean = mean(before);
    cp.after_mean = mean(after);
    cp.relative_change = cp.before_mean != 0 ? cp.after_mean / cp.before_mean - 1 : 0;
    cp.p_value = welch_t_test(before, after);
    cp.permutation_p = found[i].permutation_p;
    return cp;
  };
  for (;;) {
    std::vector<ChangePoint> cps;
    for (std::size_t i = 0; i < found.size(); ++i) cps.push_back(describe(i));
    std::size_t weakest = cps.size();
    for (std::size_t i = 0; i < cps.size(); ++i) {
      const bool fails =
          cps[i].p_value >= s.t_test_alpha || std::fabs(cps[i].relative_change) < s.min_magnitude;
      if (fails && (weakest == cps.size() || cps[i].p_value > cps[weakest].p_value)) weakest = i;
    }
    if (weakest == cps.size()) return cps;
    found.erase(found.begin() + static_cast<std::ptrdiff_t>(weakest));
  }
}

}  // namespace attnprof::stats
