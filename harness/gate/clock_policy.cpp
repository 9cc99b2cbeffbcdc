// A GPU case's clock policy from its stored metrics (clock_policy.h).
#include "harness/gate/clock_policy.h"

#include <fmt/format.h>

#include "harness/core/metric_names.h"

namespace attnprof::gate {

namespace {

// 1980 -> "1,980", as nvidia-smi's readers know clocks.
std::string grouped(double v) {
  std::string digits = fmt::format("{:.0f}", v);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

}  // namespace

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
                          : fmt::format("applications clock {} of {} MHz", grouped(*app),
                                        grouped(*def));
  if (!persistence) return clocks;
  return clocks + (clocks.empty() ? "" : ", ") +
         (*persistence != 0 ? "persistence on" : "persistence off");
}

}  // namespace attnprof::gate
