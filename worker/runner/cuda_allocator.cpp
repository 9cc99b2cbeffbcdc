// The CUDA caching allocator's statistics for memory_watch.h: LibTorch's own counters
// (c10::cuda::CUDACachingAllocator::getDeviceStats), the ones torch.cuda.memory_stats() reads.
// An allocator backend that keeps none (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync keeps
// only some) gives zeros, which memory_watch.cpp reads as not recorded.
#include <c10/cuda/CUDACachingAllocator.h>

#include "worker/runner/memory_watch.h"

namespace attnprof::runner::cuda {
namespace {

constexpr auto kAll = static_cast<std::size_t>(c10::CachingDeviceAllocator::StatType::AGGREGATE);

}  // namespace

std::int64_t reset_allocator_peaks(int device) {
  try {
    const auto index = static_cast<c10::DeviceIndex>(device);
    c10::cuda::CUDACachingAllocator::resetPeakStats(index);
    return c10::cuda::CUDACachingAllocator::getDeviceStats(index).num_alloc_retries;
  } catch (const c10::Error&) {
    return 0;
  }
}

AllocatorStats allocator_stats(int device) {
  try {
    const auto s =
        c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
    return {s.reserved_bytes[kAll].peak, s.allocated_bytes[kAll].peak, s.num_alloc_retries,
            s.segment[kAll].peak};
  } catch (const c10::Error&) {
    return {};
  }
}

}  // namespace attnprof::runner::cuda
