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

Status spin_for(std::int64_t ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(ns < 0 ? 0 : ns));
  ATTNPROF_CUDA_LAUNCHED("spin_kernel");
  return Status::success();
}

}  // namespace attnprof::kernels::cuda
