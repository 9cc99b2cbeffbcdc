// The per-op cost matrix (laid out like torch.profiler's
// key_averages() table): one row per op, and a kernel view that says which kernels each op
// launched ("kernel fusion mapping": one op to many small kernels, or one fused kernel).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"
#include "harness/trace/model.h"

namespace attnprof::costmatrix {

// Name of the row that collects device activity no op claimed (kernels launched outside any
// RecordFunction scope, e.g. a raw CUDA launch not wrapped in a user scope).
inline constexpr std::string_view kNoOp = "[no op]";

// One row per (op name, input shapes, enclosing op name), like key_averages(group_by_input_shape)
// with the parent kept so nested views stay readable. Every figure is per call of the body, over
// the kept calls (kept_calls). CPU times leave out the tracer's own time (OpEvent::tracer_ns).
// launches counts kernels, copies memcpys and memsets. Self times exclude child ops; device self
// is the time of the kernels, memcpys and memsets the op launched itself, device total adds its
// descendants'. share is the row's self time over the case's (device where the trace has device
// activity, else CPU). Rows are ranked by device self time on a GPU, by CPU self time on a CPU.
std::vector<core::CostRow> build(const trace::Trace& t);

// Which of a pass's calls the matrix uses: all but those whose wall time is more than
// kOutlierCallFactor times off the median call's, either way. On a shared machine a call the
// scheduler preempted takes several times as long, and one such call in ten would double a
// per-call mean the median of the timed samples never sees; a call far faster than the median
// ran while the machine was in another state (the other process asleep), and a mean over both
// states is a call that never happened. Every call when the trace has no call_starts.
inline constexpr double kOutlierCallFactor = 1.5;
std::vector<bool> kept_calls(const trace::Trace& t);

// The wall time of each call of a pass (from its start to the next call's, the last to the end),
// and their lower median (0 without call_starts): the call kept_calls measures the others by, so
// the kept calls, the ones the matrix shows, lie around it.
std::vector<double> call_walls(const trace::Trace& t);
double median_call_ns(const trace::Trace& t);
// The same lower median of any calls' wall times (untraced calls timed beside a pass).
double median_call_ns(std::vector<double> walls);

// Whether a CPU pass ran in the state of the machine the timed samples saw: its median call
// (tracer included) within kStateFactor of the measured median, either way; the factor is the
// agreement the matrix is held to (bench/cost_agreement.py: within 25%). A shared machine
// moves between states (other processes, OpenMP threads that spin or sleep) for seconds at a
// time, and a pass of ten calls a few milliseconds long can fall wholly into one the samples'
// median never saw: a per-op matrix of calls five times as slow as the median says nothing
// about the case. On calls of a millisecond the tracer's own cost is far below the factor
// (bench/cost_agreement.py), so a pass that fails this is another state, and the runner traces
// again; on calls of a few microseconds the tracer alone may exceed it.
inline constexpr double kStateFactor = 1.25;
bool same_state(double pass_median_call_ns, double measured_median_ns);

// The kernel view: one row per (kernel, launching op, grid, block).
struct KernelRow {
  std::string kernel;
  std::string op;  // kNoOp when no op claimed it
  int calls = 0;
  double total_ns = 0, min_ns = 0, max_ns = 0;
  std::array<std::int32_t, 3> grid{0, 0, 0}, block{0, 0, 0};
  int registers_per_thread = 0;
  int shared_bytes = 0;  // static + dynamic, per block
  double avg_ns() const { return calls ? total_ns / calls : 0; }
};

struct Kernels {
  std::vector<KernelRow> rows;  // by total time, longest first
  double total_ns = 0;          // sum over all kernels
};

Kernels kernels(const trace::Trace& t);

// Time during which at least one kernel, memcpy or memset ran (overlaps counted once).
double device_busy_ns(const trace::Trace& t);

// The wall-clock window of the pass: from the body's start to the later of its end and the last
// device record's end.
double wall_ns(const trace::Trace& t);

// Inclusive time of the outermost calls of `op` over the inclusive time of all top-level ops: the
// attention share of a block or layer when the runner wraps attention in a user scope of that
// name. Device time where the trace has device activity, else CPU time. 0 when nothing ran.
double share_of(const trace::Trace& t, std::string_view op);
// The same for every op whose name `is_part` accepts (the outermost of them where they nest).
double share_of(const trace::Trace& t, const std::function<bool(std::string_view)>& is_part);

// Whether an op is attention itself, for a block or layer a module computes in one call: SDPA's
// ops and backends, FlexAttention ("aten::_scaled_dot_product_flash_attention_for_cpu",
// "aten::scaled_dot_product_attention", "flex_attention"...). The attention share of such a
// module is theirs.
bool is_attention_op(std::string_view name);

// What a case ran (core::CaseResult::kernels), from its cost rows: with `device` (a GPU case) the
// kernels its ops launched, else the ops themselves (ATen ops and scopes, kNoOp left out); each
// once, outermost first (by how deep the op, or the op launching the kernel, is nested, then by
// name), so that a list of what changed starts where two cases part: another backend's op
// before the ops it calls. It is compared as a set: neither order nor counts are part of it.
// nullopt for a GPU case whose rows name no kernel (no device trace): unknown, not an empty set.
std::optional<std::vector<std::string>> kernel_set(const std::vector<core::CostRow>& rows,
                                                   bool device);

}  // namespace attnprof::costmatrix
