// NVML, loaded at run time: its header is not in the CUDA toolkit, and the library comes with the
// driver, so a machine without a driver simply has no NVML. Only the calls attnprof needs, with
// their documented C signatures. Devices are found by PCI bus id: NVML numbers devices by PCI
// bus, CUDA by speed (unless CUDA_DEVICE_ORDER=PCI_BUS_ID), and CUDA_VISIBLE_DEVICES renumbers,
// so CUDA's device 0 may be another GPU than NVML's device 0 on a multi-GPU runner.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnprof::env {

class Nvml {
 public:
  static Nvml& instance();
  bool available() const { return m_ok; }
  // The device with this PCI bus id ("0000:18:00.0", from cudaDeviceGetPCIBusId), or null where
  // NVML or the device is not there.
  void* device(const std::string& pci_bus_id) const;
  std::optional<double> sm_clock_mhz(void* device) const;
  std::optional<double> power_limit_w(void* device) const;
  // "enabled", "disabled", "unsupported"; nullopt when NVML cannot say.
  std::optional<std::string> mig_mode(void* device) const;
  // The SM applications clock (what the driver targets under load unless boost has headroom)
  // and the SM maximum clock.
  std::optional<double> app_sm_clock_mhz(void* device) const;
  std::optional<double> max_sm_clock_mhz(void* device) const;
  std::optional<double> default_app_sm_clock_mhz(void* device) const;
  // nvmlClocksEventReason* bits now (the throttle reasons of older drivers).
  std::optional<unsigned long long> clock_event_reasons(void* device) const;
  // The pids of every process with a compute or graphics context on the device.
  std::optional<std::vector<unsigned>> process_ids(void* device) const;
  // Millijoules since the driver loaded (Volta and later).
  std::optional<double> energy_mj(void* device) const;
  // Persistence mode: true enabled, false disabled.
  std::optional<bool> persistence(void* device) const;
  // The percent of the last sample period (1/6 s to 1 s, by board) in which a kernel ran.
  std::optional<double> utilization_pct(void* device) const;
  // The GPU core's temperature (NVML_TEMPERATURE_GPU), degrees Celsius.
  std::optional<double> temperature_c(void* device) const;
  // Each process's highest SM utilization (%) in the driver's samples taken after `since_us`
  // (wall clock, microseconds since the epoch); a process with no sample since is absent.
  std::optional<std::map<unsigned, double>> process_sm_pct(void* device,
                                                           unsigned long long since_us) const;

 private:
  Nvml();
  bool m_ok = false;
  int (*m_by_bus)(const char*, void**) = nullptr;
  int (*m_clock)(void*, int, unsigned*) = nullptr;
  int (*m_limit)(void*, unsigned*) = nullptr;
  int (*m_mig)(void*, unsigned*, unsigned*) = nullptr;
  int (*m_app_clock)(void*, int, unsigned*) = nullptr;
  int (*m_max_clock)(void*, int, unsigned*) = nullptr;
  int (*m_default_clock)(void*, int, unsigned*) = nullptr;
  int (*m_reasons)(void*, unsigned long long*) = nullptr;
  int (*m_compute)(void*, unsigned*, void*) = nullptr;
  int (*m_graphics)(void*, unsigned*, void*) = nullptr;
  int (*m_energy)(void*, unsigned long long*) = nullptr;
  int (*m_persistence)(void*, int*) = nullptr;
  int (*m_utilization)(void*, void*) = nullptr;
  int (*m_temperature)(void*, int, unsigned*) = nullptr;
  int (*m_process_util)(void*, void*, unsigned*, unsigned long long) = nullptr;
};

}  // namespace attnprof::env
