// The CUDA parts of the GPU timer (harness/measure/device_timer.h), one concept per file as
// nvbench splits them: CUDA events on the timed stream (cuda_events.cpp), the L2 flush
// (l2_flush.cpp), the blocking kernel (blocking_kernel.cpp), CUDA-graph batches (graph_batch.cpp),
// CUPTI's records per call (cupti_recorder.cpp), the SM clock per sample (clock_reader.cpp) and
// NVML's view of the device around the samples (gpu_monitor.cpp).
// The decisions that use them live in DeviceTimer and are tested with fakes; these only talk to
// the device. Built where the CUDA toolkit is (ATTNPROF_HAVE_CUDA); tests/device runs them.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>

#include "harness/measure/device_timer.h"

namespace attnprof::runner::cuda {

// The stream the case's call runs on: the calling thread's current stream, asked each time (a
// graph capture switches it for a while).
using StreamSource = std::function<cudaStream_t()>;

// Throws util::EnvironmentError naming the failed CUDA call, its error and file:line.
void check(cudaError_t e, const char* call, const char* file, int line);
#define ATTNPROF_CUDA_CHECK(call) ::attnprof::runner::cuda::check((call), #call, __FILE__, __LINE__)

std::unique_ptr<measure::Events> make_events(StreamSource stream);
// A buffer of twice the device's L2 (one memset of exactly its size may not evict a partitioned
// L2, as on H100/H200), memset on the timed stream.
std::unique_ptr<measure::L2Flush> make_l2_flush(int device, StreamSource stream);
std::unique_ptr<measure::BlockingKernel> make_blocking_kernel(StreamSource stream);
// Captures on a side stream from LibTorch's pool (at::cuda::CUDAGraph refuses the default
// stream, and its private memory pool keeps the call's allocations valid for replay); replays on
// the timed stream.
std::unique_ptr<measure::GraphBatch> make_graph_batch(int device, std::function<void()> call,
                                                      StreamSource stream);
// Null, with *why_not, where device tracing is not available (trace::device_tracing_available).
std::unique_ptr<measure::CallRecorder> make_cupti_recorder(std::string* why_not);
// NVML's handle of this CUDA device, found by PCI bus id (CUDA and NVML number devices
// differently); null where NVML or the device is not there.
void* nvml_device(int device);
// The SM clock of each sample: the timestamps kernel around the call on `stream`, else NVML's
// clock after it; null where neither is there.
std::unique_ptr<measure::ClockReader> make_clock_reader(int device, StreamSource stream);
// NVML's view of this CUDA device around a case's samples (gpu_monitor.cpp): expected clock,
// throttle reasons, processes, energy; null where NVML or the device is not there.
std::unique_ptr<measure::GpuMonitor> make_gpu_monitor(int device);

}  // namespace attnprof::runner::cuda
