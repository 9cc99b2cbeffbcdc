// The workers' OpenMP wait policy (wait_policy.h): PASSIVE unless the user chose.
#include "harness/worker/wait_policy.h"

#include <algorithm>
#include <cstdlib>

namespace attnprof::worker {

bool apply_wait_policy(std::vector<std::string>& env) {
  const bool chosen = std::getenv("OMP_WAIT_POLICY") != nullptr ||
                      std::any_of(env.begin(), env.end(), [](const std::string& e) {
                        return e.starts_with("OMP_WAIT_POLICY=");
                      });
  if (!chosen) env.insert(env.begin(), "OMP_WAIT_POLICY=PASSIVE");
  return chosen;
}

std::string wait_policy_note(bool chosen) {
  return chosen ? "" : "workers run with OMP_WAIT_POLICY=PASSIVE (set it to choose)";
}

}  // namespace attnprof::worker
