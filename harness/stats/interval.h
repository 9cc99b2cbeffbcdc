// A confidence interval and the coverage it actually has. Distribution-free intervals come from
// order statistics, so their coverage is a step function of n: `level` is what was achieved
// (at least the requested level when n allows it, less for tiny n), never just what was asked.
#pragma once

namespace attnprof::stats {

struct Interval {
  double low = 0;
  double high = 0;
  double level = 0;  // achieved coverage, 0..1
  bool contains(double x) const { return low <= x && x <= high; }
};

}  // namespace attnprof::stats
