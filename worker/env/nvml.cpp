// NVML through dlopen (nvml.h): the few entry points attnprof calls, looked up once.
#include "worker/env/nvml.h"

#include <dlfcn.h>

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
  m_mig = reinterpret_cast<int (*)(void*, unsigned*, unsigned*)>(dlsym(lib, "nvmlDeviceGetMigMode"));
  m_ok = init && m_by_bus && init() == 0;
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
