// A GPU case's clock policy from its stored metrics (clock_policy.h).
#include "harness/gate/clock_policy.h"

#include <fmt/format.h>

#include "harness/core/metric_names.h"
#include "harness/core/stability.h"

namespace attnprof::gate {

std::string clock_policy(const std::map<std::string, double>& metrics) {
  auto at = [&](const char* name) -> const double* {
    auto it = metrics.find(name);
    return it == metrics.end() ? nullptr : &it->second;
  };
  const double* app = at(core::kApplicationsClockMetric);
  const double* def = at(core::kDefaultApplicationsClockMetric);
  const double* persistence = at(core::kPersistenceMetric);
  std::string clocks;
  if (app && def)
    clocks = *app == *def ? "default clocks"
                          : fmt::format("applications clock {} of {} MHz", core::grouped(*app),
                                        core::grouped(*def));
  // The applications clocks at their default, and yet the driver says a user's clock setting
  // held the clock: that is `nvidia-smi -lgc`, which NVML has no getter for.
  const double* reasons = at(core::kThrottleReasonsMetric);
  if (reasons && core::clock_held_by_setting(static_cast<std::uint64_t>(*reasons)) &&
      (!app || !def || *app == *def))
    clocks = clocks.empty() ? "SM clock held by a user setting (nvidia-smi -lgc)"
                            : clocks + ", SM clock held by a user setting (nvidia-smi -lgc)";
  if (!persistence) return clocks;
  return clocks + (clocks.empty() ? "" : ", ") +
         (*persistence != 0 ? "persistence on" : "persistence off");
}

}  // namespace attnprof::gate
