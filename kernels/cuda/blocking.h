// Kernels for timing the other kernels, not for attention. Plain C++ header (no LibTorch, no
// CUDA C++ beyond cudaStream_t), so host code includes it with the host compiler.
//
//   StreamBlocker  nvbench's blocking kernel: one thread spins on a host-mapped flag, holding
//                  its stream while the host enqueues "event start; the call; event stop"
//                  behind it; release() lets all of it run back to back on the device, so the
//                  host's launch overhead falls outside the events. It gives up after a timeout
//                  (a call that waits for the GPU itself would otherwise deadlock) and says so.
//   spin_for       a kernel of known length (spins on %globaltimer for `ns`), to check timers.
//
// Every call returns Status (kernels/attention_params.h): error with the failed CUDA call and
// its error string, else ok.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/attention_params.h"

namespace attnprof::kernels::cuda {

class StreamBlocker {
 public:
  StreamBlocker() = default;
  ~StreamBlocker();
  StreamBlocker(const StreamBlocker&) = delete;
  StreamBlocker& operator=(const StreamBlocker&) = delete;

  // Allocates the two host-mapped flags (release, timed out). Needs a CUDA device.
  Status init();
  // Enqueues the spinning kernel on `stream`. The stream must be idle, or at least hold no
  // earlier blocking kernel of this blocker: the flags are reset here.
  Status block(cudaStream_t stream, double timeout_s = 10.0);
  // Lets the kernel finish. Host side only; never waits.
  void release();
  // Whether the last block() gave up on its timeout instead of being released. Read it after the
  // stream has been synchronized.
  bool timed_out() const;

 private:
  volatile std::int32_t* m_host = nullptr;  // [0]: release, [1]: timed out
  std::int32_t* m_device = nullptr;         // the same two words, as the device sees them
};

// One block of one thread that returns once `ns` nanoseconds of %globaltimer have passed.
Status spin_for(std::int64_t ns, cudaStream_t stream);

}  // namespace attnprof::kernels::cuda
