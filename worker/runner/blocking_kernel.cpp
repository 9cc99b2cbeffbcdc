// The blocking kernel in the GPU timer (cuda_parts.h): kernels/cuda/blocking.h's StreamBlocker
// on the timed stream.
#include "harness/util/error.h"
#include "kernels/cuda/blocking.h"
#include "worker/runner/cuda_parts.h"

namespace attnprof::runner::cuda {
namespace {

void check(const kernels::Status& s) {
  if (!s.ok()) throw util::EnvironmentError(s.message);
}

class CudaBlockingKernel final : public measure::BlockingKernel {
 public:
  explicit CudaBlockingKernel(StreamSource stream) : m_stream(std::move(stream)) {
    check(m_blocker.init());
  }
  void block(double timeout_s) override { check(m_blocker.block(m_stream(), timeout_s)); }
  void release() noexcept override { m_blocker.release(); }
  bool timed_out() const override { return m_blocker.timed_out(); }

 private:
  StreamSource m_stream;
  kernels::cuda::StreamBlocker m_blocker;
};

}  // namespace

std::unique_ptr<measure::BlockingKernel> make_blocking_kernel(StreamSource stream) {
  return std::make_unique<CudaBlockingKernel>(std::move(stream));
}

}  // namespace attnprof::runner::cuda
