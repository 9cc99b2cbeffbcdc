// What the driver says of a GPU around a case: the clock it should run at, why it runs slower,
// who else has a context on it, and the energy it has used. NVML in the worker
// (worker/runner/gpu_monitor.cpp, loaded at run time), a fake in tests/unit/test_gpu_watch.cpp;
// GpuWatch turns two readings, before the case's samples and after them, into the case's
// metrics and notes, so every decision is tested without a GPU.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/util/error.h"

namespace attnprof::measure {

struct GpuProcess {
  std::uint32_t pid = 0;
  std::string name;  // empty where this process cannot see it (another PID namespace)
  // Started by the process that started this worker: the other worker of an `attnprof ab`
  // pair, which shares the GPU by design (its rounds alternate with ours), not a co-tenant.
  bool sibling = false;
};

class GpuMonitor {
 public:
  virtual ~GpuMonitor() = default;
  // The SM clock the case should run at: the applications clock, else the device's maximum.
  virtual std::optional<double> expected_sm_clock_mhz() = 0;
  // NVML's clock-event reasons now (nvmlClocksEventReason* bits); nullopt: not readable.
  virtual std::optional<std::uint64_t> throttle_reasons() = 0;
  // Every process with a context on the device, this worker included; nullopt: not readable.
  virtual std::optional<std::vector<GpuProcess>> processes() = 0;
  // The device's energy counter since the driver loaded, in millijoules (Volta and later);
  // nullopt: not supported.
  virtual std::optional<double> energy_mj() = 0;
  // How the clocks were set: the SM applications clock and its default (equal unless someone
  // set them, `nvidia-smi -ac`), and persistence mode; each nullopt where NVML cannot say.
  struct ClockPolicy {
    std::optional<double> applications_mhz, default_applications_mhz;
    std::optional<bool> persistence;
  };
  virtual ClockPolicy clock_policy() = 0;
  // The percent of the driver's last sample period in which a kernel ran on the device, anyone's;
  // nullopt: not readable.
  virtual std::optional<double> utilization_pct() { return std::nullopt; }
  // The GPU's core temperature now, in degrees Celsius; nullopt: not readable.
  virtual std::optional<double> temperature_c() { return std::nullopt; }
  // Each process's highest SM utilization (%) in the driver's per-process samples taken after
  // `since_epoch_us` (wall clock); a process with no sample since is absent. nullopt: not
  // readable (then every other process with a context counts as sharing the GPU).
  virtual std::optional<std::map<std::uint32_t, double>> sm_activity(std::int64_t since_epoch_us) {
    (void)since_epoch_us;
    return std::nullopt;
  }
};

// One reading of a GpuMonitor.
struct GpuReading {
  std::int64_t steady_ns = 0;
  std::int64_t epoch_us = 0;  // the wall clock then, what per-process activity is asked since
  std::optional<double> utilization_pct, temperature_c;
  // What the processes did: before the samples, in the second before the reading; after them,
  // over the samples. nullopt: not readable.
  std::optional<std::map<std::uint32_t, double>> activity;
  // Whether this worker ran something in the activity's window: after the samples, yes; before
  // them, only where a case of its own ended within the lookback (what NVML may have sampled).
  bool own_active = true;
  std::optional<std::uint64_t> reasons;
  std::optional<std::vector<GpuProcess>> processes;
  std::optional<double> energy_mj;
};

// The other processes of a reading: every one but this worker (`own_pid`) and its siblings. Where
// none has our pid, the list comes from another PID namespace (a container sees host pids) and one
// of them is this worker: then the count is one less and the names are all of them, said so.
// With `activity` (each pid's highest SM utilization over the window), only the ones that ran
// something share the GPU; the rest hold a context and sat idle (a display server, a notebook
// between cells), named apart and not counted. This worker, in a container, is one of the
// active ones where it ran something in the window (`own_active`), else one of the idle ones
// (where there is one). The MPS server is named as such: under MPS every client shares the GPU.
struct OtherProcesses {
  int count = 0;
  std::string who;  // "pid 4242 (python3) at up to 37% SM, pid 77 (Xorg)"
  int idle = 0;
  std::string idle_who;  // "pid 77 (Xorg)"
};
OtherProcesses other_processes(const std::vector<GpuProcess>& all, std::uint32_t own_pid,
                               const std::map<std::uint32_t, double>* activity = nullptr,
                               bool own_active = true);

// Before a case's samples and after them: the expected clock, the throttle reasons seen at
// either end, the other processes at either end, and the energy the samples' calls used.
class GpuWatch {
 public:
  GpuWatch(GpuMonitor& monitor, std::uint32_t own_pid) : m_monitor(monitor), m_own(own_pid) {}
  // Before the first sample; the other processes then, active in the second before where that
  // is readable (what --require-idle-gpu refuses).
  OtherProcesses begin(std::int64_t steady_ns, std::int64_t epoch_us);
  // After the last sample, `calls` calls of the case after begin() (graph replays count each
  // call they hold).
  void end(std::int64_t steady_ns, std::int64_t epoch_us, std::int64_t calls);
  // While a sample's call runs (the host waiting for it): the driver's reasons then, at most one
  // read every kReasonsEveryNs. The readings at either end come after a synchronize, with the GPU
  // idle, when a power cap or a thermal slowdown of the calls may already have lifted.
  void during_call(std::int64_t steady_ns);
  // gpu.clock.expected_mhz, gpu.throttle_reasons (at either end and while calls ran),
  // gpu.other_processes (the most that shared the
  // GPU at either end), gpu.other_processes_idle, gpu.utilization.begin_pct and end_pct,
  // gpu.temperature.begin_c and end_c,
  // energy.joules_per_call, power.average_w, and the clock policy (gpu.clock.applications_mhz,
  // gpu.clock.default_applications_mhz, gpu.persistence): each where it was read.
  std::map<std::string, double> metrics() const;
  // Who shared the GPU, and why there is no energy figure where the counter exists but the
  // window was too short for it.
  std::vector<std::string> notes() const;

  static constexpr std::int64_t kReasonsEveryNs = 10'000'000;
  // How far back the reading before the samples looks for other processes' activity.
  static constexpr std::int64_t kActivityLookbackUs = 1'000'000;
  // The shortest window energy per call is given for: NVML's counter advances in steps of
  // tens of milliseconds on some boards.
  static constexpr std::int64_t kMinEnergyWindowNs = 100'000'000;

 private:
  GpuReading read(std::int64_t steady_ns, std::int64_t epoch_us, std::int64_t since_us);
  OtherProcesses others(const GpuReading& r) const;

  GpuMonitor& m_monitor;
  std::uint32_t m_own;
  std::optional<double> m_expected;
  GpuMonitor::ClockPolicy m_policy;
  GpuReading m_begin, m_end;
  std::optional<std::uint64_t> m_during;  // the reasons read while calls ran, or-ed
  std::int64_t m_during_read_ns = -1;     // when they were last asked for; < 0: never
  bool m_ended = false;
  std::int64_t m_calls = 0;
};

// Who shares the GPU now: the other processes with a context on it, counted only where they ran
// something in the last GpuWatch::kActivityLookbackUs (where that is readable). What
// `--require-idle-gpu` refuses before a case's setup, as GpuWatch::begin does before its samples.
OtherProcesses sharing_now(GpuMonitor& monitor, std::uint32_t own_pid, std::int64_t epoch_us);

// Whether this process ended a GpuWatch's samples within GpuWatch::kActivityLookbackUs before
// `epoch_us` (wall clock): whether NVML may list it as active then.
bool ran_on_gpu_recently(std::int64_t epoch_us);

// `--require-idle-gpu`'s refusal: the case ends in an error, unmeasured, with
// gpu.other_processes set, and `attnprof run` stops there (session/run_session.h).
class GpuSharedError : public util::EnvironmentError {
 public:
  explicit GpuSharedError(const OtherProcesses& others);
  int count() const { return m_count; }

 private:
  int m_count;
};

}  // namespace attnprof::measure
