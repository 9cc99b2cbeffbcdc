#include "harness/runner/timers.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <chrono>

#include "harness/util/error.h"
#include "harness/runner/workload.h"

#ifdef ATTNPROF_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#endif

namespace attnprof::runner {
namespace {

std::int64_t epoch_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class CpuTimer final : public measure::Timer {
 public:
  explicit CpuTimer(std::function<void()> call) : m_call(std::move(call)) {}
  core::Sample sample() override {
    core::Sample s;
    s.at_ns = epoch_ns();
    auto t0 = std::chrono::steady_clock::now();
    m_call();
    auto t1 = std::chrono::steady_clock::now();
    s.ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    return s;
  }

 private:
  std::function<void()> m_call;
};

#ifdef ATTNPROF_HAVE_CUDA
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw util::EnvironmentError(fmt::format("{}: {} ({})", what, cudaGetErrorString(e),
                                             cudaGetErrorName(e)));
}

// NVML, loaded at run time: its header is not in the toolkit, and the library comes with the
// driver. Only the two calls we need, with their documented C signatures.
class Nvml {
 public:
  static Nvml& instance() {
    static Nvml n;
    return n;
  }
  std::optional<double> sm_clock_mhz(int device) {
    if (!m_ok) return std::nullopt;
    void* dev = nullptr;
    if (m_handle(unsigned(device), &dev) != 0) return std::nullopt;
    unsigned mhz = 0;
    if (m_clock(dev, /*NVML_CLOCK_SM*/ 1, &mhz) != 0) return std::nullopt;
    return double(mhz);
  }

 private:
  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    m_handle = reinterpret_cast<int (*)(unsigned, void**)>(
        dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    m_clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(
        dlsym(lib, "nvmlDeviceGetClockInfo"));
    m_ok = init && m_handle && m_clock && init() == 0;
  }
  bool m_ok = false;
  int (*m_handle)(unsigned, void**) = nullptr;
  int (*m_clock)(void*, int, unsigned*) = nullptr;
};

class CudaTimer final : public measure::Timer {
 public:
  CudaTimer(int device, std::function<void()> call) : m_device(device), m_call(std::move(call)) {
    int l2 = 0;
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
    // Twice the L2: one memset of exactly its size may not evict a partitioned L2 (H100/H200).
    m_flush = at::empty({2 * int64_t(l2)}, at::TensorOptions().dtype(at::kByte).device(
                                                at::Device(at::kCUDA, device)));
    check(cudaEventCreate(&m_start), "cudaEventCreate");
    check(cudaEventCreate(&m_stop), "cudaEventCreate");
  }
  ~CudaTimer() override {
    cudaEventDestroy(m_start);
    cudaEventDestroy(m_stop);
  }
  core::Sample sample() override {
    cudaStream_t stream = at::cuda::getCurrentCUDAStream(m_device);
    check(cudaMemsetAsync(m_flush.data_ptr(), 0, m_flush.numel(), stream), "cudaMemsetAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    core::Sample s;
    s.at_ns = epoch_ns();
    check(cudaEventRecord(m_start, stream), "cudaEventRecord");
    m_call();
    check(cudaEventRecord(m_stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(m_stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, m_start, m_stop), "cudaEventElapsedTime");
    s.ns = static_cast<std::int64_t>(double(ms) * 1e6);
    s.sm_clock_mhz = Nvml::instance().sm_clock_mhz(m_device);
    return s;
  }

 private:
  int m_device;
  std::function<void()> m_call;
  at::Tensor m_flush;
  cudaEvent_t m_start{}, m_stop{};
};
#endif

}  // namespace

std::unique_ptr<measure::Timer> make_timer(const core::Case& c, std::function<void()> call) {
#ifdef ATTNPROF_HAVE_CUDA
  if (c.hardware.device.rfind("cuda", 0) == 0)
    return std::make_unique<CudaTimer>(device_of(c).index() < 0 ? 0 : device_of(c).index(),
                                       std::move(call));
#endif
  (void)c;
  return std::make_unique<CpuTimer>(std::move(call));
}

}  // namespace attnprof::runner
