// The sampling engine: how many times to call a Timer, and what the calls say.
//
// 1. Warm-up until stationary. At least `warmup_ms` of timed calls, then more until the medians
//    of the last two windows of calls agree within `stationary_tolerance` (clock ramp-up, cold
//    caches, lazy initialisation and allocator growth all show up as drift). Capped, so a
//    kernel that never settles still gets measured; Result::stationary says which it was.
// 2. Sampling until the distribution-free CI of the median (stats::median_ci) is narrow: the
//    larger of its two half-widths, over the median, at most `target_rel_ci`, with at least
//    `min_samples`; or until `time_budget_s` (warm-up included: a hard cap, it may end the run
//    below min_samples) or `max_samples` ends it. Summary::converged says whether the target
//    was met.
// 3. Every sample is kept, with its timestamp. Samples whose measured SM clock is below
//    `throttle_ratio` (0.97) of the run's median clock are marked dropped and counted, never
//    removed. The threshold is relative to this run's median, not to the device's nominal
//    clock (nvbench's 75% of peak), so it catches a 5% throttle and can never drop more than
//    half of the samples (NVIDIA/nvbench#231: a whole benchmark discarded).
//
// Outliers on the CPU (and elsewhere): none are removed. A preempted or interrupted call is a
// real observation of what this machine did; fences (3 sigma, 1.5 IQR) would bias the
// distribution towards fast and hide real bimodality (a kernel that sometimes takes a slow
// path). Instead everything downstream is robust by construction: the summary is the median
// with an order-statistic CI (breakdown point 50%: a few spikes move it by a rank or two and
// widen the CI slightly, which makes the engine take a few more samples), and the gate uses
// rank statistics (Mann-Whitney) and medians. The spikes stay in the stored samples, where
// max_ns and the history show them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/measure/timer.h"

namespace attnprof::measure {

struct Options {
  std::size_t window = 32;     // calls per stationarity window (notes: 32)
  std::size_t min_window = 8;  // slow calls: windows shrink to fit the cap, not below this
  double stationary_tolerance = 0.005;
  double warmup_cap_s = 2.0;  // and never more than half the time budget
  std::size_t warmup_max_calls = 100000;
  double ci_level = 0.95;
  double throttle_ratio = 0.97;
  // Monotonic clock in ns for the budgets; default steady_clock. Tests pass a scripted one.
  std::function<std::int64_t()> clock;
  // Called once, after warm-up and before the first sample: where a caller starts counting what
  // the measured calls do (the worker's memory figures, worker/runner/memory_watch.h).
  std::function<void()> sampling_starts;
};

struct Result {
  std::vector<core::Sample> samples;  // kept samples AND dropped ones (dropped=true), in order
  core::Summary summary;              // over kept samples; converged = CI target met
  int warmup_calls = 0;
  double warmup_ns = 0;        // timed ns spent in warm-up calls
  bool stationary = false;     // warm-up ended on stationarity, not on its cap
  double warmup_rel_diff = 0;  // the last window comparison made in warm-up
  int dropped = 0;             // samples marked dropped (throttled)
  std::string stop_reason;     // "ci target met", "time budget", "max samples"
};

Result run(Timer& timer, const core::MeasureSettings& settings, const Options& options = {});

// The pieces of run(), for drivers that interleave two timers (attnprof ab): warm-up alone
// (step 1), a batch of samples, and the final summary (step 3).
struct WarmUp {
  int calls = 0;
  double ns = 0;            // timed ns spent in warm-up calls
  bool stationary = false;  // ended on stationarity, not on its cap
  double rel_diff = 0;      // the last window comparison
};
WarmUp warm_up(Timer& timer, const core::MeasureSettings& settings, const Options& options = {});

// Samples for about `batch_ns` of wall time, and at least `min_calls` (at least one), at most
// `max_calls`. Each sample is stamped with its epoch time. attnprof ab judges a batch by its
// lower quartile, which needs a few calls to stand on also where a call is long.
std::vector<core::Sample> sample_batch(Timer& timer, double batch_ns, int min_calls, int max_calls);

// Marks throttled samples (step 3) and summarizes the kept ones; converged says whether the
// settings' CI target is met. `dropped`, when given, receives how many were marked.
core::Summary summarize(std::vector<core::Sample>& samples, const core::MeasureSettings& settings,
                        const Options& options = {}, int* dropped = nullptr);

// Marks samples whose sm_clock_mhz is below ratio x the median clock of the samples that have
// one; samples without a clock are never dropped. Returns how many are marked.
int mark_throttled(std::vector<core::Sample>& samples, double ratio);

}  // namespace attnprof::measure
