// The Wald-Wolfowitz runs test of whether values in time order come in stretches
// (runs_test.h).
#include "harness/stats/runs_test.h"

#include <cmath>
#include <vector>

#include "harness/stats/distributions.h"
#include "harness/stats/quantile.h"

namespace attnprof::stats {

RunsTest runs_test(std::span<const double> values) {
  RunsTest t;
  if (values.empty()) return t;
  const double m = median(values);
  int last = 0;
  for (double v : values) {
    if (v == m) continue;
    const int side = v > m ? 1 : -1;
    (side > 0 ? t.above : t.below)++;
    if (side != last) ++t.runs;
    last = side;
  }
  const double n1 = t.above, n2 = t.below, n = n1 + n2;
  if (n1 < 5 || n2 < 5) return t;
  t.expected = 2 * n1 * n2 / n + 1;
  const double var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1));
  t.p_fewer = normal_cdf((t.runs + 0.5 - t.expected) / std::sqrt(var));
  return t;
}

}  // namespace attnprof::stats
