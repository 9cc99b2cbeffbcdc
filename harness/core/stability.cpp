// Descheduled samples and unstable cases (stability.h).
#include "harness/core/stability.h"

#include <fmt/format.h>

#include <algorithm>

namespace attnprof::core {

bool descheduled(const Sample& s, int threads) {
  if (s.wait_ns) return static_cast<double>(*s.wait_ns) > kDescheduledWait * static_cast<double>(s.ns);
  if (!s.cpu_ns || !s.invol_switches || *s.invol_switches < 1) return false;
  const double capacity = static_cast<double>(std::max(1, threads)) * static_cast<double>(s.ns);
  return static_cast<double>(*s.cpu_ns) < (1 - kDescheduledShortfall) * capacity;
}

Stability stability(const CaseResult& r) {
  Stability st;
  for (const Sample& s : r.samples) {
    if (!s.wait_ns && (!s.cpu_ns || !s.invol_switches)) continue;
    ++st.recorded;
    st.descheduled += descheduled(s, r.spec.hardware.threads);
  }
  if (auto it = r.metrics.find(kLoadMetric); it != r.metrics.end()) st.load = it->second;
  if (auto it = r.metrics.find(kCoresMetric); it != r.metrics.end())
    st.cores = static_cast<int>(it->second);
  if (st.recorded == 0) return st;
  st.share = static_cast<double>(st.descheduled) / st.recorded;
  st.unstable = unstable_share(st.share, r.spec.measure);
  if (!st.unstable) return st;
  st.note = fmt::format("unstable: descheduled in {:.0f}% of samples", 100 * st.share);
  if (st.load >= 0 && st.cores > 0)
    st.note +=
        fmt::format("; load {:.1f} on {} core{}", st.load, st.cores, st.cores == 1 ? "" : "s");
  return st;
}

}  // namespace attnprof::core
