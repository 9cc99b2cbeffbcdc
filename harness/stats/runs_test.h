// The Wald-Wolfowitz runs test: are values in time order exchangeable, or do they come in
// stretches? Each value is marked above or below the median (values equal to it are left out)
// and the runs of equal marks are counted; too few runs means stretches. attnprof ab uses it on
// an A/B's per-round log ratios: on a shared machine one worker can sit in a slow state for
// seconds (a descheduled thread), which pairing cannot cancel and which shows as stretches.
#pragma once

#include <span>

namespace attnprof::stats {

struct RunsTest {
  int runs = 0;
  int above = 0, below = 0;
  double expected = 0;  // expected runs for exchangeable values
  double p_fewer = 1;   // P(this few runs or fewer): small means stretches
};

// Normal approximation with a continuity correction; p_fewer is 1 when either side has fewer
// than 5 values (too few to tell).
RunsTest runs_test(std::span<const double> values);

}  // namespace attnprof::stats
