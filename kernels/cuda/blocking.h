// Kernels for timing the other kernels, not for attention. Plain C++ header (no LibTorch, no
// CUDA C++ beyond cudaStream_t), so host code includes it with the host compiler.
//
//   StreamBlocker  nvbench's blocking kernel: one thread spins on a host-mapped flag, holding
//                  its stream while the host enqueues "event start; the call; event stop"
//                  behind it; release() lets all of it run back to back on the device, so the
//                  host's launch overhead falls outside the events. It gives up after a timeout
//                  (a call that waits for the GPU itself would otherwise deadlock) and says so.
//   spin_for       a kernel of known length (spins on %globaltimer for `ns`), to check timers.
//   SmTimestamps   nvbench's SM clock reading: a tiny kernel, before a sample and after it, has
//                  SM 0 write %globaltimer (ns) and clock64() (that SM's cycles); the cycles
//                  between the two over the nanoseconds are the SM clock the sample ran at, on
//                  average over it, where NVML's clock is a reading of the moment after.
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

class SmTimestamps {
 public:
  SmTimestamps() = default;
  ~SmTimestamps();
  SmTimestamps(const SmTimestamps&) = delete;
  SmTimestamps& operator=(const SmTimestamps&) = delete;

  // Allocates the host-mapped words the kernel writes; `blocks` is the device's SM count (one
  // block per SM, so that one of them lands on SM 0). Needs a CUDA device.
  Status init(int blocks);
  // Enqueues the reading before (start) or after the sample on `stream`; start clears both.
  Status stamp(cudaStream_t stream, bool start);
  // After the stream has been synchronized past the second stamp: the SM clock in MHz between
  // the two, or a non-positive value where SM 0 wrote no stamp or time did not advance.
  double mhz() const;

 private:
  volatile unsigned long long* m_host = nullptr;  // [0..1] start (ns, cycles), [2..3] stop
  unsigned long long* m_device = nullptr;
  int m_blocks = 1;
};

}  // namespace attnprof::kernels::cuda
