// What the measured calls did to memory (core/metric_names.h): on the CPU the process's resident
// set growth and its minor and major page faults per call (getrusage, /proc/self/statm); on a GPU
// the CUDA caching allocator's reserved and allocated peaks, their ratio, its allocation retries
// and its peak segment count. A case brackets each stretch of measured calls (attnprof run's
// samples after warm-up, each of attnprof ab's batches) with begin() and end(); the stretches add
// up, so the idle time between an A/B's batches is not counted.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace attnprof::runner {

class MemoryWatch {
 public:
  // `cuda_device` >= 0: a GPU case on that device (the allocator's figures); < 0: a CPU case.
  explicit MemoryWatch(int cuda_device) : m_device(cuda_device) {}

  void begin();
  void end(int calls);
  // The figures over every stretch so far; empty before the first end() with calls, and on a GPU
  // where this build has no CUDA or the allocator keeps no statistics.
  std::map<std::string, double> metrics() const;

 private:
  struct Snapshot {
    std::int64_t minor = 0, major = 0, rss_bytes = 0;
  };
  static Snapshot take();

  int m_device;
  bool m_started = false;  // the allocator's peaks were reset
  Snapshot m_at;
  std::int64_t m_calls = 0, m_minor = 0, m_major = 0, m_rss_growth = 0;
  std::int64_t m_retries_before = 0;
};

namespace cuda {
// The CUDA caching allocator's statistics for a device (cuda_allocator.cpp, built with CUDA).
struct AllocatorStats {
  std::int64_t reserved_peak = 0, allocated_peak = 0, retries = 0, segments_peak = 0;
};
// Resets the peaks (so they are the measured calls'), returning the retries so far.
std::int64_t reset_allocator_peaks(int device);
AllocatorStats allocator_stats(int device);
}  // namespace cuda

}  // namespace attnprof::runner
