// CUDA-graph batches in the GPU timer (cuda_parts.h): the case's call captured K times into one
// graph, replayed as one sample, as nvbench's batch mode. Capture fails for calls that
// synchronize or allocate in ways capture rejects; then nothing stays captured and the timer
// keeps single cold calls.
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>

#include "worker/runner/cuda_parts.h"

namespace attnprof::runner::cuda {
namespace {

// The first line of an exception's text: c10::Error appends a C++ backtrace.
std::string first_line(const std::exception& e) {
  if (const auto* c10e = dynamic_cast<const c10::Error*>(&e)) {
    std::string s = c10e->what_without_backtrace();
    return s.substr(0, s.find('\n'));
  }
  std::string s = e.what();
  return s.substr(0, s.find('\n'));
}

class CudaGraphBatch final : public measure::GraphBatch {
 public:
  CudaGraphBatch(int device, std::function<void()> call, StreamSource stream)
      : m_device(device), m_call(std::move(call)), m_stream(std::move(stream)) {}
  ~CudaGraphBatch() override { m_graph.reset(); }
  CudaGraphBatch(const CudaGraphBatch&) = delete;
  CudaGraphBatch& operator=(const CudaGraphBatch&) = delete;

  std::optional<std::string> capture(int calls) override {
    const auto side = at::cuda::getStreamFromPool(/*isHighPriority=*/false, m_device);
    try {
      ATTNPROF_CUDA_CHECK(cudaDeviceSynchronize());
      at::cuda::CUDAStreamGuard on_side(side);
      // Warm up on the side stream first: library handles and workspaces are per stream.
      for (int i = 0; i < 2; ++i) m_call();
      ATTNPROF_CUDA_CHECK(cudaStreamSynchronize(side.stream()));
      m_graph = std::make_unique<at::cuda::CUDAGraph>();
      m_graph->capture_begin();
      try {
        for (int i = 0; i < calls; ++i) m_call();
      } catch (...) {
        end_failed_capture(side);
        throw;
      }
      m_graph->capture_end();
      m_graph->replay();  // instantiates where capture_end did not; also the graph's warm-up
      ATTNPROF_CUDA_CHECK(cudaStreamSynchronize(side.stream()));
      // Launched directly in samples: replay() also refills the RNG seed tensors of the graph's
      // generators, small kernels that are no part of the call.
      m_exec = m_graph->raw_cuda_graph_exec();
      return std::nullopt;
    } catch (const std::exception& e) {
      end_failed_capture(side);
      m_graph.reset();
      m_exec = nullptr;
      cudaGetLastError();  // capture errors are not sticky; clear them for the calls that follow
      return first_line(e);
    }
  }

  void launch() override { ATTNPROF_CUDA_CHECK(cudaGraphLaunch(m_exec, m_stream())); }

 private:
  // Leaves neither the side stream capturing nor the allocator routing to the graph's pool.
  void end_failed_capture(const at::cuda::CUDAStream& side) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(side.stream(), &status) != cudaSuccess ||
        status == cudaStreamCaptureStatusNone)
      return;
    if (m_graph) {
      try {
        at::cuda::CUDAStreamGuard on_side(side);
        m_graph->capture_end();  // ends the allocator's capture pool, then the stream's capture
      } catch (const std::exception&) {
        // cudaErrorStreamCaptureInvalidated, expected here.
      }
    }
    if (cudaStreamIsCapturing(side.stream(), &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
      cudaGraph_t g = nullptr;
      if (cudaStreamEndCapture(side.stream(), &g) == cudaSuccess && g) cudaGraphDestroy(g);
    }
    cudaGetLastError();
  }

  int m_device;
  std::function<void()> m_call;
  StreamSource m_stream;
  std::unique_ptr<at::cuda::CUDAGraph> m_graph;
  cudaGraphExec_t m_exec = nullptr;
};

}  // namespace

std::unique_ptr<measure::GraphBatch> make_graph_batch(int device, std::function<void()> call,
                                                      StreamSource stream) {
  return std::make_unique<CudaGraphBatch>(device, std::move(call), std::move(stream));
}

}  // namespace attnprof::runner::cuda
