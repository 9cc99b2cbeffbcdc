// What NVML says of the case's GPU around its samples (harness/measure/gpu_monitor.h): the
// device found by the CUDA device's PCI bus id, as the clock reader finds it; the processes'
// names and parents from /proc, where this worker can see them.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "worker/env/nvml.h"
#include "worker/runner/cuda_parts.h"

namespace attnprof::runner::cuda {
namespace {

// /proc/PID/comm, or "" where the process is not visible from here (another PID namespace).
std::string process_name(unsigned pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

// The parent of a visible process, 0 where it is not visible. /proc/PID/stat: "pid (comm) state
// ppid ...", the comm in parentheses may hold spaces and parentheses: read after the last ')'.
pid_t parent_of(unsigned pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 1));
  char state = 0;
  pid_t ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

class NvmlGpuMonitor final : public measure::GpuMonitor {
 public:
  explicit NvmlGpuMonitor(void* device) : m_device(device) {}
  std::optional<double> expected_sm_clock_mhz() override {
    const env::Nvml& nvml = env::Nvml::instance();
    if (auto app = nvml.app_sm_clock_mhz(m_device)) return app;
    return nvml.max_sm_clock_mhz(m_device);
  }
  std::optional<std::uint64_t> throttle_reasons() override {
    return env::Nvml::instance().clock_event_reasons(m_device);
  }
  std::optional<std::vector<measure::GpuProcess>> processes() override {
    auto pids = env::Nvml::instance().process_ids(m_device);
    if (!pids) return std::nullopt;
    std::vector<measure::GpuProcess> out;
    const pid_t parent = getppid();
    for (unsigned pid : *pids) {
      const pid_t ppid = parent_of(pid);
      out.push_back({pid, process_name(pid), ppid != 0 && ppid == parent});
    }
    return out;
  }
  std::optional<double> energy_mj() override { return env::Nvml::instance().energy_mj(m_device); }
  ClockPolicy clock_policy() override {
    const env::Nvml& nvml = env::Nvml::instance();
    return {nvml.app_sm_clock_mhz(m_device), nvml.default_app_sm_clock_mhz(m_device),
            nvml.persistence(m_device)};
  }
  std::optional<double> utilization_pct() override {
    return env::Nvml::instance().utilization_pct(m_device);
  }
  std::optional<double> temperature_c() override {
    return env::Nvml::instance().temperature_c(m_device);
  }
  std::optional<std::map<std::uint32_t, double>> sm_activity(std::int64_t since_epoch_us) override {
    auto pct = env::Nvml::instance().process_sm_pct(
        m_device, static_cast<unsigned long long>(std::max<std::int64_t>(0, since_epoch_us)));
    if (!pct) return std::nullopt;
    return std::map<std::uint32_t, double>(pct->begin(), pct->end());
  }

 private:
  void* m_device;
};

}  // namespace

std::unique_ptr<measure::GpuMonitor> make_gpu_monitor(int device) {
  void* nvml = nvml_device(device);
  return nvml ? std::make_unique<NvmlGpuMonitor>(nvml) : nullptr;
}

}  // namespace attnprof::runner::cuda
