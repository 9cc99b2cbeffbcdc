// What this machine is, as plain data (no LibTorch, no CUDA: attnprof reads it from its worker): CPU, threads, LibTorch, CUDA runtime and driver, devices. The stable
// fields key baselines and history (core::Environment::fingerprint); measured values such as
// clocks are reported but kept out of the fingerprint.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/core/types.h"

namespace attnprof::env {

struct Device {
  int index = 0;
  std::string name;
  std::string compute_capability;  // "9.0"
  double memory_gib = 0;
  int sm_count = 0;
  double l2_mib = 0;
  double peak_gbps = 0;  // from memory clock and bus width, when the runtime reports them
  std::string pci_bus_id;   // "0000:18:00.0": how CUDA's and NVML's numbering meet
  double power_limit_w = 0;  // NVML's enforced power limit; 0 unknown
  std::string mig_mode;      // "enabled", "disabled", "unsupported"; empty unknown
  // How its clocks are set (NVML): the SM applications clock and its default (equal unless set
  // with `nvidia-smi -ac`), and persistence mode; 0 and empty: unknown. Not in the fingerprint:
  // history across a change of clocks is a note (gate/clock_policy.h), not another machine.
  double app_clock_mhz = 0, default_app_clock_mhz = 0;
  std::string persistence;  // "enabled", "disabled"; empty unknown
};

struct Description {
  std::string cpu_model;
  int cpu_logical = 0;
  int torch_threads = 0;
  std::string torch_version;
  bool cuda_built = false;   // LibTorch and attnprof built with CUDA
  std::string cuda_runtime;  // "13.0", empty when not built with CUDA
  std::string cuda_driver;   // "13.0" (driver API version), empty when no driver
  std::string cuda_status;   // why there is no usable GPU, or "ok"
  std::string cuda_toolkit;  // what the worker was built with: "13.0.88 from <root> (pip wheels)"
  // The torch the worker was built against and how it was chosen: "active venv <python> (torch
  // 2.11.0 in <site-packages>/torch)". Empty from a worker built before it was recorded.
  std::string torch_source;
  std::vector<Device> devices;
};

// Description <-> JSON: attnprof-worker probes the machine (probe.h), attnprof reads its answer.
nlohmann::json to_json(const Description& d);
Description description_from_json(const nlohmann::json& j);

// Stable fields for the fingerprint, for a case run on `device` ("cpu", "cuda", "cuda:N")
// under a clock policy ("record" or "require-locked").
core::Environment fingerprint_for(const Description& d, const std::string& device,
                                  const std::string& clock_policy = "record");

// Dense tensor-core peak TFLOP/s of a known GPU at a dtype (vendor datasheet figures; fp32
// without TF32), 0 when the GPU is not in the table. Scenario hardware.peak_tflops overrides.
double peak_tflops(const Device& d, core::DType dtype);

// The human-readable report of `attnprof env`.
std::string render(const Description& d);

// True when `device` names something this process can run on; otherwise why not.
bool device_usable(const Description& d, const std::string& device, std::string* why_not);

}  // namespace attnprof::env
