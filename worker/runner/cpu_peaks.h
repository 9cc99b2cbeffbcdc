// The CPU's peaks for a case's roofline where the scenario gives none: a short probe, a
// STREAM-like triad for bandwidth and an fp32 GEMM for FLOP/s (about a quarter of a second),
// measured at the threads the case runs with and cached per machine (harness/env/peaks.h), so a
// machine pays for it once.
#pragma once

#include "harness/env/environment.h"
#include "harness/env/peaks.h"

namespace attnprof::runner {

// The probe itself, at at::get_num_threads() threads: the best of a few repetitions of each.
env::CpuPeaks probe_cpu_peaks();

// The cached peaks for this machine and the current thread count, else probed and cached. A
// case that achieved more FLOP/s than the cached peak (`achieved_tflops`) shows it was measured
// on a busy machine: probed again, the higher of each figure kept. (Bytes cannot tell: a case
// whose data stays in cache moves its bytes faster than memory can.)
env::CpuPeaks cpu_peaks(const env::Description& d, double achieved_tflops);

}  // namespace attnprof::runner
