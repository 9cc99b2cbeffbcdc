// The memory figures of a case's measured calls (memory_watch.h).
#include "worker/runner/memory_watch.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

#include "harness/core/metric_names.h"

namespace attnprof::runner {

MemoryWatch::Snapshot MemoryWatch::take() {
  Snapshot s;
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) == 0) {
    s.minor = u.ru_minflt;
    s.major = u.ru_majflt;
  }
  // statm's second field: resident pages. Read with stdio, not an ifstream: this runs between
  // measured calls and allocates nothing the kernel's heap would see.
  if (FILE* f = std::fopen("/proc/self/statm", "re")) {
    long long size = 0, resident = 0;
    if (std::fscanf(f, "%lld %lld", &size, &resident) == 2)
      s.rss_bytes = resident * sysconf(_SC_PAGESIZE);
    std::fclose(f);
  }
  return s;
}

void MemoryWatch::begin() {
  if (m_device >= 0) {
    // The allocator's peaks are a process's whole life: reset them before the first measured call
    // so they are the case's, inputs and workspaces included.
    if (!m_started) m_retries_before = cuda::reset_allocator_peaks(m_device);
    m_started = true;
    return;
  }
  m_at = take();
}

void MemoryWatch::end(int calls) {
  if (calls <= 0) return;
  m_calls += calls;
  if (m_device >= 0) return;
  const Snapshot now = take();
  m_minor += now.minor - m_at.minor;
  m_major += now.major - m_at.major;
  m_rss_growth += now.rss_bytes - m_at.rss_bytes;
}

std::map<std::string, double> MemoryWatch::metrics() const {
  std::map<std::string, double> out;
  if (m_calls <= 0) return out;
  out[core::kMemoryCallsMetric] = double(m_calls);
  if (m_device < 0) {
    out[core::kRssGrowthMetric] = double(m_rss_growth);
    out[core::kMinorFaultsMetric] = double(m_minor) / double(m_calls);
    out[core::kMajorFaultsMetric] = double(m_major) / double(m_calls);
    return out;
  }
  const cuda::AllocatorStats s = cuda::allocator_stats(m_device);
  if (s.reserved_peak <= 0) return {};  // no statistics: not recorded
  out[core::kReservedPeakMetric] = double(s.reserved_peak);
  out[core::kAllocatedPeakMetric] = double(s.allocated_peak);
  if (s.allocated_peak > 0)
    out[core::kReservedRatioMetric] = double(s.reserved_peak) / double(s.allocated_peak);
  out[core::kAllocRetriesMetric] = double(s.retries - m_retries_before);
  out[core::kSegmentsMetric] = double(s.segments_peak);
  return out;
}

#ifndef ATTNPROF_HAVE_CUDA
// A build without CUDA runs no GPU case: no allocator, no figures.
namespace cuda {
std::int64_t reset_allocator_peaks(int) {
  return 0;
}
AllocatorStats allocator_stats(int) {
  return {};
}
}  // namespace cuda
#endif

}  // namespace attnprof::runner
