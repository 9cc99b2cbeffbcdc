// Named metrics (CaseResult::metrics) that the worker records and more than one stage reads: how
// close the output came to its reference, and what the measured calls did to memory. One
// spelling for the worker, the gate, the reports and `history --metric`.
#pragma once

namespace attnprof::core {

// The check against the reference: the mean absolute error over the output's elements (the
// largest is CaseResult::max_abs_error, a column of the store that `history` reads under
// kMaxAbsErrorMetric).
inline constexpr const char* kMeanAbsErrorMetric = "accuracy.mean_abs_error";
inline constexpr const char* kMaxAbsErrorMetric = "accuracy.max_abs_error";

// Over the measured calls (the timed samples, after warm-up), on the CPU: how far the process's
// resident set grew, and its minor and major page faults per call. A kernel that allocates a
// size the allocator cannot reuse faults fresh pages in every call; one that fragments the heap
// grows the resident set.
inline constexpr const char* kRssGrowthMetric = "memory.rss_growth_bytes";
inline constexpr const char* kMinorFaultsMetric = "memory.minor_faults_per_call";
inline constexpr const char* kMajorFaultsMetric = "memory.major_faults_per_call";
inline constexpr const char* kMemoryCallsMetric = "memory.calls";  // the calls they are over

// Over the measured calls, on a GPU: the CUDA caching allocator's peaks of reserved and allocated
// bytes and their ratio (reserved memory no tensor uses: fragmentation), the allocations it had
// to retry after freeing its cache, and its peak count of segments (cudaMalloc'd blocks).
inline constexpr const char* kReservedPeakMetric = "memory.cuda.reserved_peak_bytes";
inline constexpr const char* kAllocatedPeakMetric = "memory.cuda.allocated_peak_bytes";
inline constexpr const char* kReservedRatioMetric = "memory.cuda.reserved_over_allocated";
inline constexpr const char* kAllocRetriesMetric = "memory.cuda.alloc_retries";
inline constexpr const char* kSegmentsMetric = "memory.cuda.segments";

// Over the measured calls, on a GPU with NVML's energy counter (Volta and later): the energy the
// device used per call of the case (from the counter's advance over the samples, divided by the
// calls they timed: the L2 flush and the gaps between calls included, so an upper bound that a
// long kernel's own energy approaches) and its average power over them.
inline constexpr const char* kEnergyPerCallMetric = "energy.joules_per_call";
inline constexpr const char* kAveragePowerMetric = "power.average_w";

// How a GPU's clocks were set while a case ran (harness/measure/gpu_monitor.h): the SM
// applications clock, its default, and persistence mode (1 on, 0 off). gate/clock_policy.h
// reads them: history across a change of policy is not one series.
inline constexpr const char* kApplicationsClockMetric = "gpu.clock.applications_mhz";
inline constexpr const char* kDefaultApplicationsClockMetric = "gpu.clock.default_applications_mhz";
inline constexpr const char* kPersistenceMetric = "gpu.persistence";

// What else the GPU did around a case (gpu_monitor.h), recorded, not judged: the device's
// utilization (anyone's kernels, this worker's included) when the samples began and when they
// ended, and the other processes that held a context on it but ran nothing during the samples
// (those that ran something are gpu.other_processes, which makes a case unstable).
inline constexpr const char* kUtilizationBeginMetric = "gpu.utilization.begin_pct";
inline constexpr const char* kUtilizationEndMetric = "gpu.utilization.end_pct";
inline constexpr const char* kIdleOtherProcessesMetric = "gpu.other_processes_idle";
// The GPU's temperature when the samples began and when they ended (degrees Celsius): beside a
// throttled case's thermal reason, how hot it ran.
inline constexpr const char* kTemperatureBeginMetric = "gpu.temperature.begin_c";
inline constexpr const char* kTemperatureEndMetric = "gpu.temperature.end_c";
// The share of a GPU case's per-sample SM clocks read by the timestamps kernel (the average
// clock over the sample); the rest are NVML's clock of the moment after the call.
inline constexpr const char* kClockTimestampedMetric = "gpu.clock.timestamped";

// The fragmentation figures, in the order every report lists them.
inline constexpr const char* kFragmentationMetrics[] = {
    kRssGrowthMetric,     kMinorFaultsMetric,   kMajorFaultsMetric,  kReservedPeakMetric,
    kAllocatedPeakMetric, kReservedRatioMetric, kAllocRetriesMetric, kSegmentsMetric};

}  // namespace attnprof::core
