// attnprof-worker's side of `attnprof env`: asks LibTorch and the CUDA runtime what this machine
// is. The rest of the env stage (fingerprints, rendering) is torch-free.
#include "worker/env/probe.h"

#include "worker/env/nvml.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/version.h>

#include "attnprof/cuda_toolkit.h"
#include "attnprof/torch_source.h"

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
  d.cuda_toolkit = std::string(ATTNPROF_CUDA_TOOLKIT_SOURCE) == "none"
                       ? "none"
                       : fmt::format("{} from {} ({})", ATTNPROF_CUDA_TOOLKIT_VERSION,
                                     ATTNPROF_CUDA_TOOLKIT_ROOT, ATTNPROF_CUDA_TOOLKIT_SOURCE);
  const std::string python = ATTNPROF_TORCH_PYTHON;
  d.torch_source = fmt::format("{}{} (torch {} in {})", ATTNPROF_TORCH_SOURCE,
                               python.empty() ? "" : " " + python, ATTNPROF_TORCH_PACKAGE_VERSION,
                               ATTNPROF_TORCH_PACKAGE);
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
      char bus[32] = {};
      if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) dev.pci_bus_id = bus;
      const Nvml& nvml = Nvml::instance();
      void* handle = nvml.device(dev.pci_bus_id);
      dev.power_limit_w = nvml.power_limit_w(handle).value_or(0);
      dev.mig_mode = nvml.mig_mode(handle).value_or("");
      dev.app_clock_mhz = nvml.app_sm_clock_mhz(handle).value_or(0);
      dev.default_app_clock_mhz = nvml.default_app_sm_clock_mhz(handle).value_or(0);
      if (auto on = nvml.persistence(handle)) dev.persistence = *on ? "enabled" : "disabled";
      d.devices.push_back(dev);
    }
  }
#else
  d.cuda_status = "attnprof was built without CUDA (ATTNPROF_CUDA=OFF)";
#endif
  return d;
}

}  // namespace attnprof::env
