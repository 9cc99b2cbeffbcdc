// CUDA events around a timed call, and the waits the GPU timer needs (cuda_parts.h).
#include <fmt/format.h>

#include <cmath>

#include "harness/util/error.h"
#include "worker/runner/cuda_parts.h"

namespace attnprof::runner::cuda {

void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess)
    throw util::EnvironmentError(fmt::format("{}: {} ({}) ({}:{})", call, cudaGetErrorString(e),
                                             cudaGetErrorName(e), file, line));
}

namespace {

class CudaEvents final : public measure::Events {
 public:
  explicit CudaEvents(StreamSource stream) : m_stream(std::move(stream)) {
    ATTNPROF_CUDA_CHECK(cudaEventCreate(&m_start));
    ATTNPROF_CUDA_CHECK(cudaEventCreate(&m_stop));
  }
  ~CudaEvents() override {
    cudaEventDestroy(m_start);
    cudaEventDestroy(m_stop);
  }
  CudaEvents(const CudaEvents&) = delete;
  CudaEvents& operator=(const CudaEvents&) = delete;

  void wait_idle() override { ATTNPROF_CUDA_CHECK(cudaStreamSynchronize(m_stream())); }
  void wait_device() override { ATTNPROF_CUDA_CHECK(cudaDeviceSynchronize()); }
  void record_start() override { ATTNPROF_CUDA_CHECK(cudaEventRecord(m_start, m_stream())); }
  void record_stop() override { ATTNPROF_CUDA_CHECK(cudaEventRecord(m_stop, m_stream())); }
  std::int64_t elapsed_ns() override {
    ATTNPROF_CUDA_CHECK(cudaEventSynchronize(m_stop));
    float ms = 0;
    ATTNPROF_CUDA_CHECK(cudaEventElapsedTime(&ms, m_start, m_stop));
    return static_cast<std::int64_t>(std::llround(double(ms) * 1e6));
  }

 private:
  StreamSource m_stream;
  cudaEvent_t m_start{}, m_stop{};
};

}  // namespace

std::unique_ptr<measure::Events> make_events(StreamSource stream) {
  return std::make_unique<CudaEvents>(std::move(stream));
}

}  // namespace attnprof::runner::cuda
