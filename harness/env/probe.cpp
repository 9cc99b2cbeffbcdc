// attnprof-worker's side of `attnprof env`: asks LibTorch and the CUDA runtime what this machine
// is. The rest of the env stage (fingerprints, rendering) is torch-free.
#include "harness/env/probe.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/version.h>

#include "attnprof/cuda_toolkit.h"

#include <fstream>
#include <thread>

#include <dlfcn.h>

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

#ifdef ATTNPROF_HAVE_CUDA
// NVML, loaded at run time (its library comes with the driver, not the toolkit): the power
// limit and MIG mode of a device, found by PCI bus id. CUDA and NVML number devices
// differently (NVML by PCI bus, CUDA by speed unless CUDA_DEVICE_ORDER=PCI_BUS_ID, and
// CUDA_VISIBLE_DEVICES renumbers), so the bus id is the only safe link between them.
void nvml_fill(Device& dev) {
  static void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib || dev.pci_bus_id.empty()) return;
  static const bool ok = [] {
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    return init && init() == 0;
  }();
  if (!ok) return;
  auto by_bus = reinterpret_cast<int (*)(const char*, void**)>(
      dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto limit =
      reinterpret_cast<int (*)(void*, unsigned*)>(dlsym(lib, "nvmlDeviceGetPowerManagementLimit"));
  auto mig = reinterpret_cast<int (*)(void*, unsigned*, unsigned*)>(
      dlsym(lib, "nvmlDeviceGetMigMode"));
  void* handle = nullptr;
  if (!by_bus || by_bus(dev.pci_bus_id.c_str(), &handle) != 0) return;
  unsigned mw = 0;
  if (limit && limit(handle, &mw) == 0) dev.power_limit_w = mw / 1000.0;
  unsigned current = 0, pending = 0;
  if (mig) {
    const int rc = mig(handle, &current, &pending);
    if (rc == 0) dev.mig_mode = current ? "enabled" : "disabled";
    else if (rc == 3 /* NVML_ERROR_NOT_SUPPORTED */) dev.mig_mode = "unsupported";
  }
}
#endif

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
      nvml_fill(dev);
      d.devices.push_back(dev);
    }
  }
#else
  d.cuda_status = "attnprof was built without CUDA (ATTNPROF_CUDA=OFF)";
#endif
  return d;
}

}  // namespace attnprof::env
