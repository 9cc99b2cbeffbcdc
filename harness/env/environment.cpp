#include "harness/env/environment.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/version.h>

#include <fstream>
#include <thread>

#ifdef ATTNPROF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace attnprof::env {
namespace {

std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto s = line.substr(colon + 1);
        s.erase(0, s.find_first_not_of(' '));
        return s;
      }
    }
  }
  return "unknown";
}

std::string version_string(int v) {
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

}  // namespace

Description describe() {
  Description d;
  d.cpu_model = read_cpu_model();
  d.cpu_logical = static_cast<int>(std::thread::hardware_concurrency());
  d.torch_threads = at::get_num_threads();
  d.torch_version = TORCH_VERSION;
#ifdef ATTNPROF_HAVE_CUDA
  d.cuda_built = true;
  int rt = 0;
  if (cudaRuntimeGetVersion(&rt) == cudaSuccess) d.cuda_runtime = version_string(rt);
  int drv = 0;
  if (cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0) d.cuda_driver = version_string(drv);
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    // No driver is the normal case on CI machines and laptops: a status, not an error.
    d.cuda_status = fmt::format("no usable GPU: cudaGetDeviceCount: {} ({})",
                                cudaGetErrorString(err), cudaGetErrorName(err));
    cudaGetLastError();  // clear the sticky-free error so later CUDA calls start clean
  } else if (n == 0) {
    d.cuda_status = "no usable GPU: no CUDA device found";
  } else {
    d.cuda_status = "ok";
    for (int i = 0; i < n; ++i) {
      cudaDeviceProp p{};
      if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
      Device dev;
      dev.index = i;
      dev.name = p.name;
      dev.compute_capability = fmt::format("{}.{}", p.major, p.minor);
      dev.memory_gib = double(p.totalGlobalMem) / (1ull << 30);
      dev.sm_count = p.multiProcessorCount;
      dev.l2_mib = double(p.l2CacheSize) / (1 << 20);
      int mem_khz = 0, bus_bits = 0;
      if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, i) == cudaSuccess &&
          cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, i) == cudaSuccess)
        dev.peak_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;  // DDR: two transfers a clock
      d.devices.push_back(dev);
    }
  }
#else
  d.cuda_status = "attnprof was built without CUDA (ATTNPROF_CUDA=OFF)";
#endif
  return d;
}

core::Environment fingerprint_for(const Description& d, const std::string& device,
                                  const std::string& clock_policy) {
  core::Environment e;
  e.fields["clock.policy"] = clock_policy;
  e.fields["torch.version"] = d.torch_version;
  e.fields["device.kind"] = device.rfind("cuda", 0) == 0 ? "cuda" : "cpu";
  if (device.rfind("cuda", 0) == 0) {
    int index = 0;
    if (auto colon = device.find(':'); colon != std::string::npos)
      index = std::stoi(device.substr(colon + 1));
    for (const auto& dev : d.devices) {
      if (dev.index != index) continue;
      e.fields["device.name"] = dev.name;
      e.fields["device.compute_capability"] = dev.compute_capability;
    }
    e.fields["cuda.runtime"] = d.cuda_runtime;
    // Driver major only: minor driver updates do not change kernel performance identity.
    e.fields["cuda.driver"] = d.cuda_driver.substr(0, d.cuda_driver.find('.'));
  } else {
    e.fields["device.name"] = d.cpu_model;
  }
  e.fields["cpu.model"] = d.cpu_model;
  e.fields["cpu.threads"] = std::to_string(d.torch_threads);
  return e;
}

bool device_usable(const Description& d, const std::string& device, std::string* why_not) {
  if (device == "cpu") return true;
  if (device.rfind("cuda", 0) != 0) {
    if (why_not) *why_not = fmt::format("unknown device \"{}\" (use cpu, cuda or cuda:N)", device);
    return false;
  }
  if (d.devices.empty()) {
    if (why_not) *why_not = d.cuda_status;
    return false;
  }
  int index = 0;
  if (auto colon = device.find(':'); colon != std::string::npos)
    index = std::stoi(device.substr(colon + 1));
  if (index >= static_cast<int>(d.devices.size())) {
    if (why_not)
      *why_not =
          fmt::format("{} requested but only {} CUDA device(s) present", device, d.devices.size());
    return false;
  }
  return true;
}

double peak_tflops(const Device& d, core::DType dtype) {
  struct Peak {
    const char* name;  // substring of the device name
    double half, fp32;
  };
  // SXM parts where a family has several; a PCIe card reports a lower figure in reality.
  static const Peak table[] = {
      {"H200", 989.4, 66.9}, {"H100", 989.4, 66.9}, {"A100", 312, 19.5},
      {"L40S", 362.1, 91.6}, {"L4", 121, 30.3},     {"A10G", 70, 31.2},
  };
  for (const auto& p : table)
    if (d.name.find(p.name) != std::string::npos)
      return dtype == core::DType::fp32 ? p.fp32 : p.half;
  return 0;
}

std::string render(const Description& d) {
  std::string out;
  out += fmt::format("cpu:            {} ({} logical CPUs)\n", d.cpu_model, d.cpu_logical);
  out += fmt::format("intra-op threads: {}\n", d.torch_threads);
  out += fmt::format("libtorch:       {}\n", d.torch_version);
  if (d.cuda_built) {
    out += fmt::format("cuda runtime:   {}\n", d.cuda_runtime.empty() ? "unknown" : d.cuda_runtime);
    out += fmt::format("cuda driver:    {}\n", d.cuda_driver.empty() ? "none" : d.cuda_driver);
  }
  out += fmt::format("cuda status:    {}\n", d.cuda_status);
  for (const auto& dev : d.devices)
    out += fmt::format(
        "cuda:{}:         {} (sm_{}), {:.1f} GiB, {} SMs, L2 {:.0f} MiB, peak {:.0f} GB/s\n",
        dev.index, dev.name, dev.compute_capability, dev.memory_gib, dev.sm_count, dev.l2_mib,
        dev.peak_gbps);
  return out;
}

}  // namespace attnprof::env
