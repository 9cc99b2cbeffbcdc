// A CPU's peaks for the roofline, measured once per machine: where the measurement is cached and
// how it is read back. The probe itself (a triad and a GEMM in LibTorch) runs in the worker
// (worker/runner/cpu_peaks.h); the scenario's hardware.peak_* wins over both.
#pragma once

#include <optional>
#include <string>

#include "harness/env/environment.h"

namespace attnprof::env {

struct CpuPeaks {
  double tflops = 0;  // fp32 GEMM
  double gbps = 0;    // STREAM-like triad, a = b + s * c, over arrays far larger than the caches
};

// The cache file: $ATTNPROF_CACHE_DIR/cpu-peaks.json, else $XDG_CACHE_HOME/attnprof/..., else
// $HOME/.cache/attnprof/...; "" when none of them is set.
std::string peaks_cache_path();

// What a measurement is filed under: the machine's CPU fingerprint and the thread count it ran
// with ("3f2a.../threads=4"): another machine, or more threads, measure again.
std::string cpu_peaks_key(const Description& d, int threads);

// The cached peaks under `key`, or nullopt (no file, no entry, a file that is not ours).
std::optional<CpuPeaks> cached_peaks(const std::string& path, const std::string& key);

// Files `peaks` under `key`, keeping the file's other entries; written whole to a temporary file
// and renamed, so that two workers never leave half a file. False when it could not be written
// (a read-only home): the caller measures again next time, nothing fails.
bool cache_peaks(const std::string& path, const std::string& key, const CpuPeaks& peaks);

}  // namespace attnprof::env
