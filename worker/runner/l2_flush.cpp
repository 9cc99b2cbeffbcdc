// The L2 flush before a cold sample (cuda_parts.h), as nvbench's l2flush: a memset over a
// buffer larger than the L2, enqueued on the timed stream.
#include "worker/runner/cuda_parts.h"

namespace attnprof::runner::cuda {
namespace {

class CudaL2Flush final : public measure::L2Flush {
 public:
  CudaL2Flush(int device, StreamSource stream) : m_stream(std::move(stream)) {
    int l2 = 0;
    ATTNPROF_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    // Twice the L2: one memset of exactly its size may not evict a partitioned L2 (H100/H200).
    m_bytes = 2 * static_cast<std::size_t>(l2);
    if (m_bytes > 0) ATTNPROF_CUDA_CHECK(cudaMalloc(&m_buffer, m_bytes));
  }
  ~CudaL2Flush() override {
    if (m_buffer) cudaFree(m_buffer);
  }
  CudaL2Flush(const CudaL2Flush&) = delete;
  CudaL2Flush& operator=(const CudaL2Flush&) = delete;

  void flush() override {
    if (m_buffer) ATTNPROF_CUDA_CHECK(cudaMemsetAsync(m_buffer, 0, m_bytes, m_stream()));
  }

 private:
  StreamSource m_stream;
  void* m_buffer = nullptr;
  std::size_t m_bytes = 0;
};

}  // namespace

std::unique_ptr<measure::L2Flush> make_l2_flush(int device, StreamSource stream) {
  return std::make_unique<CudaL2Flush>(device, std::move(stream));
}

}  // namespace attnprof::runner::cuda
