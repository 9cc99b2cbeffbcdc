// GpuWatch's decisions over two readings of a GpuMonitor (gpu_monitor.h).
#include "harness/measure/gpu_monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "harness/core/metric_names.h"
#include "harness/core/stability.h"

namespace attnprof::measure {

namespace {

// When this process's last GpuWatch ended its samples (wall clock, us; 0: never).
std::atomic<std::int64_t> g_own_samples_ended_us{0};

std::string named(const GpuProcess& p) {
  if (p.name == "nvidia-cuda-mps-server")
    return fmt::format("pid {} (nvidia-cuda-mps-server: MPS is on, its clients share the GPU)",
                       p.pid);
  return fmt::format("pid {} ({})", p.pid, p.name.empty() ? "name not visible" : p.name);
}

void append(std::string& list, const std::string& item) {
  list += (list.empty() ? "" : ", ") + item;
}

}  // namespace

OtherProcesses other_processes(const std::vector<GpuProcess>& all, std::uint32_t own_pid,
                               const std::map<std::uint32_t, double>* activity, bool own_active) {
  const bool ours_listed =
      std::any_of(all.begin(), all.end(), [&](const GpuProcess& p) { return p.pid == own_pid; });
  OtherProcesses out;
  for (const GpuProcess& p : all) {
    if (p.pid == own_pid || p.sibling) continue;
    if (!activity) {
      ++out.count;
      append(out.who, named(p));
      continue;
    }
    const auto it = activity->find(p.pid);
    if (it != activity->end() && it->second > 0) {
      ++out.count;
      append(out.who, fmt::format("{} at up to {:.0f}% SM", named(p), it->second));
    } else {
      ++out.idle;
      append(out.idle_who, named(p));
    }
  }
  if (!ours_listed && out.count + out.idle > 0) {
    // One of them is this worker, seen from another PID namespace: an active one where activity
    // was read and it ran something in the window, an idle one where it did not, else any.
    const bool active = activity ? (own_active ? out.count > 0 : out.idle == 0) : true;
    int& n = active ? out.count : out.idle;
    std::string& list = active ? out.who : out.idle_who;
    std::string& rest = active ? out.idle_who : out.who;
    --n;
    list = n == 0 ? "" : list + " (host pids; one of them is this worker)";
    if (!rest.empty()) rest += " (host pids)";
  }
  return out;
}

GpuReading GpuWatch::read(std::int64_t steady_ns, std::int64_t epoch_us, std::int64_t since_us) {
  GpuReading r;
  r.steady_ns = steady_ns;
  r.epoch_us = epoch_us;
  r.reasons = m_monitor.throttle_reasons();
  r.processes = m_monitor.processes();
  r.energy_mj = m_monitor.energy_mj();
  r.utilization_pct = m_monitor.utilization_pct();
  r.temperature_c = m_monitor.temperature_c();
  r.activity = m_monitor.sm_activity(since_us);
  return r;
}

OtherProcesses GpuWatch::others(const GpuReading& r) const {
  if (!r.processes) return {};
  return other_processes(*r.processes, m_own, r.activity ? &*r.activity : nullptr, r.own_active);
}

bool ran_on_gpu_recently(std::int64_t epoch_us) {
  const std::int64_t ended = g_own_samples_ended_us.load();
  return ended > 0 && ended >= epoch_us - GpuWatch::kActivityLookbackUs;
}

OtherProcesses sharing_now(GpuMonitor& monitor, std::uint32_t own_pid, std::int64_t epoch_us) {
  const auto all = monitor.processes();
  if (!all) return {};
  const auto activity = monitor.sm_activity(epoch_us - GpuWatch::kActivityLookbackUs);
  return other_processes(*all, own_pid, activity ? &*activity : nullptr,
                         ran_on_gpu_recently(epoch_us));
}

GpuSharedError::GpuSharedError(const OtherProcesses& others)
    : util::EnvironmentError(
          fmt::format("the GPU is shared with {} (--require-idle-gpu: not measured)", others.who)),
      m_count(others.count) {}

OtherProcesses GpuWatch::begin(std::int64_t steady_ns, std::int64_t epoch_us) {
  m_expected = m_monitor.expected_sm_clock_mhz();
  m_policy = m_monitor.clock_policy();
  m_begin = read(steady_ns, epoch_us, epoch_us - kActivityLookbackUs);
  // Its first call, just before, is too short for NVML's per-process samples to be sure to show.
  m_begin.own_active = ran_on_gpu_recently(epoch_us);
  return others(m_begin);
}

void GpuWatch::during_call(std::int64_t steady_ns) {
  if (m_during_read_ns >= 0 && steady_ns - m_during_read_ns < kReasonsEveryNs) return;
  m_during_read_ns = steady_ns;
  if (const auto r = m_monitor.throttle_reasons()) m_during = m_during.value_or(0) | *r;
}

void GpuWatch::end(std::int64_t steady_ns, std::int64_t epoch_us, std::int64_t calls) {
  m_end = read(steady_ns, epoch_us, m_begin.epoch_us);
  m_calls = calls;
  m_ended = true;
  g_own_samples_ended_us.store(epoch_us);
}

std::map<std::string, double> GpuWatch::metrics() const {
  std::map<std::string, double> m;
  if (m_expected) m[core::kExpectedClockMetric] = *m_expected;
  if (m_policy.applications_mhz) m[core::kApplicationsClockMetric] = *m_policy.applications_mhz;
  if (m_policy.default_applications_mhz)
    m[core::kDefaultApplicationsClockMetric] = *m_policy.default_applications_mhz;
  if (m_policy.persistence) m[core::kPersistenceMetric] = *m_policy.persistence ? 1 : 0;
  if (m_begin.reasons || (m_ended && m_end.reasons) || m_during) {
    constexpr std::uint64_t kIdle = 0x1;  // no work: not a reason the case ran slower
    const std::uint64_t mask = (m_begin.reasons.value_or(0) |
                                (m_ended ? m_end.reasons.value_or(0) : 0) | m_during.value_or(0)) &
                               ~kIdle;
    m[core::kThrottleReasonsMetric] = static_cast<double>(mask);
  }
  if (m_begin.processes || (m_ended && m_end.processes)) {
    int most = 0, idle = 0;
    for (const GpuReading* r : {&m_begin, &m_end})
      if (r->processes && (r == &m_begin || m_ended)) {
        const OtherProcesses o = others(*r);
        most = std::max(most, o.count);
        idle = std::max(idle, o.idle);
      }
    m[core::kOtherProcessesMetric] = most;
    if (idle > 0) m[core::kIdleOtherProcessesMetric] = idle;
  }
  if (m_begin.utilization_pct) m[core::kUtilizationBeginMetric] = *m_begin.utilization_pct;
  if (m_ended && m_end.utilization_pct) m[core::kUtilizationEndMetric] = *m_end.utilization_pct;
  if (m_begin.temperature_c) m[core::kTemperatureBeginMetric] = *m_begin.temperature_c;
  if (m_ended && m_end.temperature_c) m[core::kTemperatureEndMetric] = *m_end.temperature_c;
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
    const OtherProcesses o = others(*r);
    if (o.count > 0 && o.who != who) {
      who = o.who;
      // With activity read, the end's list is who ran during the samples.
      out.push_back(fmt::format("GPU shared {} its samples with {}",
                                r == &m_end ? (r->activity ? "during" : "after") : "before", o.who));
    }
  }
  // Who held the GPU idle, as the last reading saw them.
  const GpuReading& last = m_ended && m_end.processes ? m_end : m_begin;
  if (const OtherProcesses o = others(last); o.idle > 0)
    out.push_back(fmt::format("GPU also held by {}, idle {} the samples (not counted as sharing it)",
                              o.idle_who, &last == &m_end ? "during" : "before"));
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
