// NVML through dlopen (nvml.h): the few entry points attnprof calls, looked up once.
#include "worker/env/nvml.h"

#include <dlfcn.h>

#include <algorithm>

namespace attnprof::env {

Nvml& Nvml::instance() {
  static Nvml n;
  return n;
}

Nvml::Nvml() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
  m_by_bus = reinterpret_cast<int (*)(const char*, void**)>(
      dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  m_clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
  m_limit =
      reinterpret_cast<int (*)(void*, unsigned*)>(dlsym(lib, "nvmlDeviceGetPowerManagementLimit"));
  m_mig =
      reinterpret_cast<int (*)(void*, unsigned*, unsigned*)>(dlsym(lib, "nvmlDeviceGetMigMode"));
  m_app_clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(
      dlsym(lib, "nvmlDeviceGetApplicationsClock"));
  m_max_clock =
      reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
  m_default_clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(
      dlsym(lib, "nvmlDeviceGetDefaultApplicationsClock"));
  // Renamed in driver 535 (clocks "event" reasons); the old name stays exported.
  void* reasons = dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!reasons) reasons = dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
  m_reasons = reinterpret_cast<int (*)(void*, unsigned long long*)>(reasons);
  // _v3 and _v2 fill the same nvmlProcessInfo_t (pid, used memory, GPU and compute instance).
  void* compute = dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!compute) compute = dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v2");
  m_compute = reinterpret_cast<int (*)(void*, unsigned*, void*)>(compute);
  void* graphics = dlsym(lib, "nvmlDeviceGetGraphicsRunningProcesses_v3");
  if (!graphics) graphics = dlsym(lib, "nvmlDeviceGetGraphicsRunningProcesses_v2");
  m_graphics = reinterpret_cast<int (*)(void*, unsigned*, void*)>(graphics);
  m_energy = reinterpret_cast<int (*)(void*, unsigned long long*)>(
      dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
  m_persistence =
      reinterpret_cast<int (*)(void*, int*)>(dlsym(lib, "nvmlDeviceGetPersistenceMode"));
  m_utilization =
      reinterpret_cast<int (*)(void*, void*)>(dlsym(lib, "nvmlDeviceGetUtilizationRates"));
  m_temperature =
      reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetTemperature"));
  m_process_util = reinterpret_cast<int (*)(void*, void*, unsigned*, unsigned long long)>(
      dlsym(lib, "nvmlDeviceGetProcessUtilization"));
  m_ok = init && m_by_bus && init() == 0;
}

namespace {

// nvmlProcessInfo_t of the _v2 and _v3 process lists.
struct ProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

// One of NVML's process lists: asked with room for a few, again with what it said it needs.
bool list_processes(int (*get)(void*, unsigned*, void*), void* device, std::vector<unsigned>& out) {
  if (!get) return false;
  std::vector<ProcessInfo> infos(16);
  for (int attempt = 0; attempt < 3; ++attempt) {
    unsigned count = static_cast<unsigned>(infos.size());
    const int rc = get(device, &count, infos.data());
    if (rc == 0) {
      for (unsigned i = 0; i < count && i < infos.size(); ++i) out.push_back(infos[i].pid);
      return true;
    }
    if (rc != 7 /* NVML_ERROR_INSUFFICIENT_SIZE */) return false;
    infos.resize(count + 8);  // processes may start between the two calls
  }
  return false;
}

}  // namespace

std::optional<double> Nvml::app_sm_clock_mhz(void* device) const {
  unsigned mhz = 0;
  if (!device || !m_app_clock || m_app_clock(device, /*NVML_CLOCK_SM*/ 1, &mhz) != 0 || mhz == 0)
    return std::nullopt;
  return double(mhz);
}

std::optional<double> Nvml::max_sm_clock_mhz(void* device) const {
  unsigned mhz = 0;
  if (!device || !m_max_clock || m_max_clock(device, /*NVML_CLOCK_SM*/ 1, &mhz) != 0 || mhz == 0)
    return std::nullopt;
  return double(mhz);
}

std::optional<double> Nvml::default_app_sm_clock_mhz(void* device) const {
  unsigned mhz = 0;
  if (!device || !m_default_clock || m_default_clock(device, /*NVML_CLOCK_SM*/ 1, &mhz) != 0 ||
      mhz == 0)
    return std::nullopt;
  return double(mhz);
}

std::optional<unsigned long long> Nvml::clock_event_reasons(void* device) const {
  unsigned long long mask = 0;
  if (!device || !m_reasons || m_reasons(device, &mask) != 0) return std::nullopt;
  return mask;
}

std::optional<std::vector<unsigned>> Nvml::process_ids(void* device) const {
  if (!device) return std::nullopt;
  std::vector<unsigned> pids;
  const bool compute = list_processes(m_compute, device, pids);
  const bool graphics = list_processes(m_graphics, device, pids);
  if (!compute && !graphics) return std::nullopt;
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

std::optional<double> Nvml::energy_mj(void* device) const {
  unsigned long long mj = 0;
  if (!device || !m_energy || m_energy(device, &mj) != 0) return std::nullopt;
  return double(mj);
}

std::optional<double> Nvml::utilization_pct(void* device) const {
  struct {
    unsigned gpu, memory;  // nvmlUtilization_t
  } u{};
  if (!device || !m_utilization || m_utilization(device, &u) != 0) return std::nullopt;
  return double(u.gpu);
}

std::optional<double> Nvml::temperature_c(void* device) const {
  unsigned c = 0;
  if (!device || !m_temperature || m_temperature(device, 0 /* NVML_TEMPERATURE_GPU */, &c) != 0)
    return std::nullopt;
  return double(c);
}

std::optional<std::map<unsigned, double>> Nvml::process_sm_pct(void* device,
                                                               unsigned long long since_us) const {
  struct Sample {  // nvmlProcessUtilizationSample_t
    unsigned pid;
    unsigned long long time_us;
    unsigned sm, memory, encoder, decoder;
  };
  if (!device || !m_process_util) return std::nullopt;
  // Asked for its count first (NVML_ERROR_INSUFFICIENT_SIZE with the count), then with room for
  // it and a few more; NVML_ERROR_NOT_FOUND (6): no sample since then, which is no activity.
  unsigned count = 0;
  int rc = m_process_util(device, nullptr, &count, since_us);
  std::map<unsigned, double> out;
  if (rc == 6) return out;
  if (rc != 7 && rc != 0) return std::nullopt;
  std::vector<Sample> samples(count + 8);
  count = static_cast<unsigned>(samples.size());
  rc = m_process_util(device, samples.data(), &count, since_us);
  if (rc == 6) return out;
  if (rc != 0) return std::nullopt;
  for (unsigned i = 0; i < count && i < samples.size(); ++i)
    out[samples[i].pid] = std::max(out[samples[i].pid], double(samples[i].sm));
  return out;
}

std::optional<bool> Nvml::persistence(void* device) const {
  int mode = 0;
  if (!device || !m_persistence || m_persistence(device, &mode) != 0) return std::nullopt;
  return mode != 0;
}

void* Nvml::device(const std::string& pci_bus_id) const {
  if (!m_ok || pci_bus_id.empty()) return nullptr;
  void* dev = nullptr;
  return m_by_bus(pci_bus_id.c_str(), &dev) == 0 ? dev : nullptr;
}

std::optional<double> Nvml::sm_clock_mhz(void* device) const {
  unsigned mhz = 0;
  if (!device || !m_clock || m_clock(device, /*NVML_CLOCK_SM*/ 1, &mhz) != 0) return std::nullopt;
  return double(mhz);
}

std::optional<double> Nvml::power_limit_w(void* device) const {
  unsigned mw = 0;
  if (!device || !m_limit || m_limit(device, &mw) != 0) return std::nullopt;
  return mw / 1000.0;
}

std::optional<std::string> Nvml::mig_mode(void* device) const {
  unsigned current = 0, pending = 0;
  if (!device || !m_mig) return std::nullopt;
  const int rc = m_mig(device, &current, &pending);
  if (rc == 0) return std::string(current ? "enabled" : "disabled");
  if (rc == 3 /* NVML_ERROR_NOT_SUPPORTED */) return std::string("unsupported");
  return std::nullopt;
}

}  // namespace attnprof::env
