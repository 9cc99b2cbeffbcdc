// The CPU peak probe and its cache (cpu_peaks.h).
#include "worker/runner/cpu_peaks.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <optional>
#include <string>

namespace attnprof::runner {
namespace {

// The fastest of `reps` calls after one untimed call: a peak is what the machine can do, so the
// slowest calls (a page fault, a descheduled thread) say nothing about it.
double best_seconds(const std::function<void()>& work, int reps) {
  work();
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

env::CpuPeaks probe_cpu_peaks() {
  env::CpuPeaks p;
  // Triad over 3 x 32 MiB, beyond the last-level cache of the machines we run on: bytes read
  // (b, c) and written (a) per pass.
  constexpr std::int64_t n = 8 << 20;
  const at::Tensor b = at::rand({n}), c = at::rand({n});
  at::Tensor a = at::empty({n});
  const double triad = best_seconds([&] { at::add_out(a, b, c, 3.0); }, 5);
  p.gbps = 3.0 * n * sizeof(float) / triad / 1e9;
  // fp32 GEMM, 1024 cubed: 2.1 GFLOP a call, large enough for BLAS to reach its peak.
  constexpr std::int64_t m = 1024;
  const at::Tensor x = at::rand({m, m}), y = at::rand({m, m});
  at::Tensor z = at::empty({m, m});
  const double gemm = best_seconds([&] { at::mm_out(z, x, y); }, 3);
  p.tflops = 2.0 * m * m * m / gemm / 1e12;
  return p;
}

env::CpuPeaks cpu_peaks(const env::Description& d, double achieved_tflops) {
  const std::string path = env::peaks_cache_path();
  const std::string key = env::cpu_peaks_key(d, at::get_num_threads());
  const std::optional<env::CpuPeaks> cached = env::cached_peaks(path, key);
  if (cached && cached->tflops >= achieved_tflops) return *cached;
  env::CpuPeaks p = probe_cpu_peaks();
  if (cached) p = {std::max(p.tflops, cached->tflops), std::max(p.gbps, cached->gbps)};
  env::cache_peaks(path, key, p);  // where it cannot be written, the next worker measures again
  return p;
}

}  // namespace attnprof::runner
