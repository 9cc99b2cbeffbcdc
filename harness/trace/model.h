// What one traced pass recorded, for the cost matrix: ATen ops from the
// RecordFunction callbacks, device activity from CUPTI, memory from the allocator reporter.
// Plain data with no LibTorch and no CUDA headers, so harness/costmatrix builds the cost matrix,
// tables and Perfetto traces from it (and its tests craft traces by hand) on any machine.
//
// All timestamps of the timed calls are nanoseconds on one clock: cuptiGetTimestamp() when
// CUPTI traced the pass (CPU and GPU records then line up), a steady clock otherwise. Memory
// events are the description call's (MemoryEvent).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnprof::trace {

// One ATen op call (RecordFunction scope FUNCTION or USER_SCOPE).
struct OpEvent {
  std::string name;  // "aten::matmul"
  // Shapes, dtypes and bytes come from the op's counterpart in the description call (tracer.h).
  std::string input_shapes;  // "[[1, 12, 128, 64], [1, 12, 64, 128]]"; [] for a non-tensor input
  std::string input_dtypes;  // "[float, float]"
  std::int64_t parent = -1;  // index into Trace::ops of the enclosing op on the same thread
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t thread = 0;  // small per-session thread number, 0 = the thread that called record
  std::int64_t bytes_allocated = 0;  // by this op itself (not its children)
  std::int64_t bytes_freed = 0;
  // The id pushed as CUPTI external correlation while this op ran (0: none pushed).
  std::uint64_t external_id = 0;
  // The tracer's own time inside [start_ns, end_ns] on this op's thread: its descendants'
  // callbacks (their clock reads and bookkeeping, CUPTI pushes). It is not the op's work, so the
  // cost matrix takes it out of the op's self and total times.
  std::uint64_t tracer_ns = 0;
};

enum class DeviceKind { kernel, memcpy, memset };

// One kernel, memcpy or memset on the device.
struct DeviceEvent {
  DeviceKind kind = DeviceKind::kernel;
  std::string name;  // kernel name (mangled), or "Memcpy HtoD", "Memset"
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t device = 0, stream = 0;
  std::uint32_t correlation_id = 0;  // CUPTI's, shared with the launching API record
  std::uint64_t external_id = 0;     // from the external-correlation record; 0: unknown
  std::int64_t op = -1;              // index into Trace::ops of the op that launched it
  // Kernels only.
  std::array<std::int32_t, 3> grid{0, 0, 0}, block{0, 0, 0};
  int registers_per_thread = 0;
  int static_shared_bytes = 0, dynamic_shared_bytes = 0;
  // Memcpy and memset only.
  std::uint64_t bytes = 0;
};

// A CUDA runtime or driver API call (cudaLaunchKernel, cuLaunchKernel, ...).
struct ApiEvent {
  bool driver = false;
  std::uint32_t cbid = 0;  // CUPTI callback id; names live in the CUPTI headers
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t thread = 0;  // OS thread id as CUPTI reports it
  std::uint32_t correlation_id = 0;
  std::uint64_t external_id = 0;
  std::int64_t op = -1;
};

// One allocation (bytes > 0) or free (bytes < 0) reported by a LibTorch allocator during the
// description call (tracer.h): at_ns is a time in that call, which comes after the timed ones,
// on the steady clock even where CUPTI timed the rest; op is the counterpart, in the first timed
// call, of the op it happened in (-1: none).
struct MemoryEvent {
  std::uint64_t at_ns = 0;
  std::int64_t bytes = 0;
  std::string device;  // "cpu", "cuda:0"
  std::int64_t op = -1;
};

struct Trace {
  // How many calls of the body the pass recorded, back to back: the cost matrix reports per call
  // (times and counts divided by it), the way torch.profiler's schedule averages active steps.
  int calls = 1;
  // When each call of the body began (calls entries, in order; empty: not recorded). A call ends
  // where the next begins, the last at end_ns.
  std::vector<std::uint64_t> call_starts;
  std::vector<OpEvent> ops;  // in enter order
  std::vector<DeviceEvent> device;
  std::vector<ApiEvent> api;
  std::vector<MemoryEvent> memory;
  std::uint64_t start_ns = 0, end_ns = 0;  // the timed calls' wall-clock window
  bool device_traced = false;              // CUPTI ran for this pass
  std::uint64_t dropped_records = 0;       // CUPTI records lost (buffers full)
  // Highest bytes in use above the level at the start of the description call, per device
  // ("cpu", "cuda:0").
  std::map<std::string, std::int64_t> peak_bytes;
  // Hardware counters over the whole body (range profiler), e.g. "dram__bytes_read.sum".
  std::map<std::string, double> counters;
  // Things a reader must know, e.g. "no GPU: device tracing not run (...)".
  std::vector<std::string> notes;
};

// The call (index into Trace::call_starts) a time falls in: the last that began at or before it;
// 0 before the first, and when call_starts is empty.
inline std::size_t call_of(const Trace& t, std::uint64_t at) {
  const auto it = std::upper_bound(t.call_starts.begin(), t.call_starts.end(), at);
  return it == t.call_starts.begin() ? 0 : static_cast<std::size_t>(it - t.call_starts.begin()) - 1;
}

}  // namespace attnprof::trace
