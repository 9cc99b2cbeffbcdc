// GpuWatch's decisions over two readings of a GpuMonitor (gpu_monitor.h).
#include "harness/measure/gpu_monitor.h"

#include <fmt/format.h>

#include <algorithm>

#include "harness/core/metric_names.h"
#include "harness/core/stability.h"

namespace attnprof::measure {

OtherProcesses other_processes(const std::vector<GpuProcess>& all, std::uint32_t own_pid) {
  const bool ours_listed =
      std::any_of(all.begin(), all.end(), [&](const GpuProcess& p) { return p.pid == own_pid; });
  OtherProcesses out;
  for (const GpuProcess& p : all) {
    if (p.pid == own_pid || p.sibling) continue;
    ++out.count;
    out.who += fmt::format("{}pid {} ({})", out.who.empty() ? "" : ", ", p.pid,
                           p.name.empty() ? "name not visible" : p.name);
  }
  if (!ours_listed && out.count > 0) {
    --out.count;  // one of them is this worker, seen from another PID namespace
    out.who = out.count == 0 ? "" : out.who + " (host pids; one of them is this worker)";
  }
  return out;
}

GpuReading GpuWatch::read(std::int64_t steady_ns) {
  GpuReading r;
  r.steady_ns = steady_ns;
  r.reasons = m_monitor.throttle_reasons();
  r.processes = m_monitor.processes();
  r.energy_mj = m_monitor.energy_mj();
  return r;
}

OtherProcesses GpuWatch::begin(std::int64_t steady_ns) {
  m_expected = m_monitor.expected_sm_clock_mhz();
  m_policy = m_monitor.clock_policy();
  m_begin = read(steady_ns);
  return m_begin.processes ? other_processes(*m_begin.processes, m_own) : OtherProcesses{};
}

void GpuWatch::end(std::int64_t steady_ns, std::int64_t calls) {
  m_end = read(steady_ns);
  m_calls = calls;
  m_ended = true;
}

std::map<std::string, double> GpuWatch::metrics() const {
  std::map<std::string, double> m;
  if (m_expected) m[core::kExpectedClockMetric] = *m_expected;
  if (m_policy.applications_mhz) m[core::kApplicationsClockMetric] = *m_policy.applications_mhz;
  if (m_policy.default_applications_mhz)
    m[core::kDefaultApplicationsClockMetric] = *m_policy.default_applications_mhz;
  if (m_policy.persistence) m[core::kPersistenceMetric] = *m_policy.persistence ? 1 : 0;
  if (m_begin.reasons || (m_ended && m_end.reasons)) {
    constexpr std::uint64_t kIdle = 0x1;  // no work: not a reason the case ran slower
    const std::uint64_t mask =
        (m_begin.reasons.value_or(0) | (m_ended ? m_end.reasons.value_or(0) : 0)) & ~kIdle;
    m[core::kThrottleReasonsMetric] = static_cast<double>(mask);
  }
  if (m_begin.processes || (m_ended && m_end.processes)) {
    int most = 0;
    for (const GpuReading* r : {&m_begin, &m_end})
      if (r->processes && (r == &m_begin || m_ended))
        most = std::max(most, other_processes(*r->processes, m_own).count);
    m[core::kOtherProcessesMetric] = most;
  }
  const std::int64_t window = m_end.steady_ns - m_begin.steady_ns;
  if (m_ended && m_begin.energy_mj && m_end.energy_mj && m_calls > 0 &&
      window >= kMinEnergyWindowNs && *m_end.energy_mj >= *m_begin.energy_mj) {
    const double joules = (*m_end.energy_mj - *m_begin.energy_mj) / 1e3;
    m[core::kEnergyPerCallMetric] = joules / static_cast<double>(m_calls);
    m[core::kAveragePowerMetric] = joules / (static_cast<double>(window) * 1e-9);
  }
  return m;
}

std::vector<std::string> GpuWatch::notes() const {
  std::vector<std::string> out;
  std::string who;
  for (const GpuReading* r : {&m_begin, &m_end}) {
    if (!r->processes || (r == &m_end && !m_ended)) continue;
    const OtherProcesses o = other_processes(*r->processes, m_own);
    if (o.count > 0 && o.who != who) {
      who = o.who;
      out.push_back(fmt::format("GPU shared {} its samples with {}",
                                r == &m_begin ? "before" : "after", o.who));
    }
  }
  if (m_ended && m_begin.energy_mj && m_end.energy_mj &&
      m_end.steady_ns - m_begin.steady_ns < kMinEnergyWindowNs)
    out.push_back(fmt::format(
        "no energy per call: the samples took {:.0f} ms, less than the {} ms NVML's energy "
        "counter needs",
        static_cast<double>(m_end.steady_ns - m_begin.steady_ns) / 1e6,
        kMinEnergyWindowNs / 1'000'000));
  return out;
}

}  // namespace attnprof::measure
