// Run validity: whether a comparison's changes look like the machine rather than the code.
// A code change moves the cases it touches; a throttled GPU, a noisy neighbour or a different
// clock moves most cases, or scatters them both ways (vllm-xpu-kernels#568). So a run is
// "environmental" when, among the cases compared against the baseline (at least min_cases):
//   - more than `same_direction` (30%) of them moved beyond their tolerance the same way, or
//   - more than `both_directions` (10%) moved each way.
// "Moved" is the point estimate (ratio outside 1 +- tolerance), not the verdict: in a noisy run
// many moves are inconclusive, and they are evidence all the same. Accepted and ignored cases
// are left out: their moves are explained. An environmental run's regressions and improvements
// become inconclusive (unless --strict), with the reason; the run is to be measured again.
#pragma once

#include <string>
#include <vector>

#include "harness/gate/compare.h"

namespace attnprof::gate {

struct ValidityOptions {
  double same_direction = 0.30;
  double both_directions = 0.10;
  int min_cases = 8;  // fewer compared cases: no judgement (one real change would be 30%)
};

struct RunValidity {
  bool environmental = false;
  int compared = 0, slower = 0, faster = 0;
  std::string reason;  // empty when not environmental
};

RunValidity assess_run(const std::vector<CaseVerdict>& verdicts,
                       const ValidityOptions& options = {});

// Regressions and improvements become inconclusive; returns how many changed. No-op unless
// validity.environmental.
int mark_environmental(std::vector<CaseVerdict>& verdicts, const RunValidity& validity);

}  // namespace attnprof::gate
