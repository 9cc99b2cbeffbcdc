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

// The fragmentation figures, in the order every report lists them.
inline constexpr const char* kFragmentationMetrics[] = {
    kRssGrowthMetric,     kMinorFaultsMetric,   kMajorFaultsMetric,  kReservedPeakMetric,
    kAllocatedPeakMetric, kReservedRatioMetric, kAllocRetriesMetric, kSegmentsMetric};

}  // namespace attnprof::core
