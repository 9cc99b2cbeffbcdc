// Whether a sequence of timings has settled: its last two windows' medians agree
// (stationarity.h).
#include "harness/stats/stationarity.h"

#include <cmath>
#include <limits>

#include "harness/stats/quantile.h"

namespace attnprof::stats {

Stationarity check_stationary(std::span<const double> xs, std::size_t window, double tolerance) {
  Stationarity s;
  s.window = window;
  if (window == 0 || xs.size() < 2 * window) {
    s.rel_diff = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  const double last = median(xs.last(window));
  const double previous = median(xs.subspan(xs.size() - 2 * window, window));
  s.rel_diff = std::abs(last - previous) / previous;
  s.stationary = s.rel_diff <= tolerance;
  return s;
}

}  // namespace attnprof::stats
