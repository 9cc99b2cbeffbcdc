// StreamBlocker and spin_for (kernels/cuda/blocking.h): the blocking kernel nvbench puts in
// front of each cold sample (nvbench/blocking_kernel.cu), and a calibration kernel of known
// length. Both spin on %globaltimer (ns since an epoch, independent of the SM clock), so the
// timeout and the spin length hold at any clock.
//
// Alone: build kernels_cuda, then the device tests in tests/device/test_timers.cpp use both.
#include <atomic>

#include "kernels/cuda/blocking.h"
#include "kernels/cuda/common.cuh"

namespace attnprof::kernels::cuda {
namespace {

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The flags live in host memory mapped into the device's address space: every volatile read
// goes over the bus and sees the host's write within microseconds.
__global__ void blocking_kernel(const volatile int* release, volatile int* timed_out,
                                unsigned long long timeout_ns) {
  const unsigned long long t0 = globaltimer_ns();
  while (*release == 0) {
    if (globaltimer_ns() - t0 >= timeout_ns) {
      *timed_out = 1;
      __threadfence_system();
      return;
    }
  }
}

// Every block's first thread asks which SM it is on; the one on SM 0 writes the time and its
// cycle counter (clock64 counts per SM; only one SM's two readings can be subtracted).
__global__ void timestamps_kernel(volatile unsigned long long* out) {
  unsigned sm = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (sm != 0 || threadIdx.x != 0) return;
  const unsigned long long cycles = clock64();
  const unsigned long long ns = globaltimer_ns();
  out[0] = ns;
  out[1] = cycles;
  __threadfence_system();
}

__global__ void spin_kernel(unsigned long long ns) {
  const unsigned long long t0 = globaltimer_ns();
  while (globaltimer_ns() - t0 < ns) {
  }
}

}  // namespace

StreamBlocker::~StreamBlocker() {
  if (m_host) cudaFreeHost(const_cast<std::int32_t*>(m_host));
}

Status StreamBlocker::init() {
  if (m_host) return Status::success();
  void* host = nullptr;
  // Portable: usable from any device's context; Mapped: the kernel reads it in place.
  ATTNPROF_CUDA_TRY(
      cudaHostAlloc(&host, 2 * sizeof(std::int32_t), cudaHostAllocMapped | cudaHostAllocPortable));
  void* device = nullptr;
  const cudaError_t e = cudaHostGetDevicePointer(&device, host, 0);
  if (e != cudaSuccess) {
    cudaFreeHost(host);
    return cuda_error("cudaHostGetDevicePointer(&device, host, 0)", e, __FILE__, __LINE__);
  }
  m_host = static_cast<volatile std::int32_t*>(host);
  m_host[0] = 0;
  m_host[1] = 0;
  m_device = static_cast<std::int32_t*>(device);
  return Status::success();
}

Status StreamBlocker::block(cudaStream_t stream, double timeout_s) {
  if (!m_host) return Status::error("StreamBlocker::block before a successful init()");
  m_host[0] = 0;
  m_host[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const auto timeout_ns = static_cast<unsigned long long>(timeout_s * 1e9);
  blocking_kernel<<<1, 1, 0, stream>>>(m_device, m_device + 1, timeout_ns);
  ATTNPROF_CUDA_LAUNCHED("blocking_kernel");
  return Status::success();
}

void StreamBlocker::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // everything enqueued before is visible
  if (m_host) m_host[0] = 1;
}

bool StreamBlocker::timed_out() const {
  return m_host && m_host[1] != 0;
}

SmTimestamps::~SmTimestamps() {
  if (m_host) cudaFreeHost(const_cast<unsigned long long*>(m_host));
}

Status SmTimestamps::init(int blocks) {
  if (m_host) return Status::success();
  m_blocks = blocks > 0 ? blocks : 1;
  void* host = nullptr;
  ATTNPROF_CUDA_TRY(cudaHostAlloc(&host, 4 * sizeof(unsigned long long),
                                  cudaHostAllocMapped | cudaHostAllocPortable));
  void* device = nullptr;
  const cudaError_t e = cudaHostGetDevicePointer(&device, host, 0);
  if (e != cudaSuccess) {
    cudaFreeHost(host);
    return cuda_error("cudaHostGetDevicePointer(&device, host, 0)", e, __FILE__, __LINE__);
  }
  m_host = static_cast<volatile unsigned long long*>(host);
  for (int i = 0; i < 4; ++i) m_host[i] = 0;
  m_device = static_cast<unsigned long long*>(device);
  return Status::success();
}

Status SmTimestamps::stamp(cudaStream_t stream, bool start) {
  if (!m_host) return Status::error("SmTimestamps::stamp before a successful init()");
  if (start) {
    for (int i = 0; i < 4; ++i) m_host[i] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  timestamps_kernel<<<m_blocks, 32, 0, stream>>>(m_device + (start ? 0 : 2));
  ATTNPROF_CUDA_LAUNCHED("timestamps_kernel");
  return Status::success();
}

double SmTimestamps::mhz() const {
  if (!m_host) return 0;
  const unsigned long long ns0 = m_host[0], c0 = m_host[1], ns1 = m_host[2], c1 = m_host[3];
  if (ns0 == 0 || ns1 <= ns0 || c1 <= c0) return 0;
  return double(c1 - c0) / double(ns1 - ns0) * 1e3;
}

Status spin_for(std::int64_t ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(ns < 0 ? 0 : ns));
  ATTNPROF_CUDA_LAUNCHED("spin_kernel");
  return Status::success();
}

}  // namespace attnprof::kernels::cuda
