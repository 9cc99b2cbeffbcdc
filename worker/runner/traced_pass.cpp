// The traced pass (traced_pass.h): the traced calls, passes again where the machine changed
// state, and what they give the case: cost matrix, trace metrics, Perfetto file, roofline.
#include "worker/runner/traced_pass.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <vector>

#include "harness/costmatrix/cost_matrix.h"
#include "harness/costmatrix/perfetto.h"
#include "harness/costmatrix/roofline.h"
#include "harness/util/error.h"
#include "worker/kernel/registry.h"
#include "worker/runner/cpu_peaks.h"
#include "worker/runner/workload.h"
#include "worker/trace/tracer.h"

namespace attnprof::runner {

namespace {

// The median of `calls` untraced calls of work, each timed alone by the steady clock, taken as
// a pass's median call is.
double median_untraced_call_ns(const std::function<at::Tensor()>& work, int calls) {
  std::vector<double> walls;
  for (int i = 0; i < calls; ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    walls.push_back(
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return costmatrix::median_call_ns(std::move(walls));
}

// A pass the cost matrix is built from, with how it was chosen.
struct KeptPass {
  trace::Trace trace;
  int passes = 0;
  double untraced_ns = 0;  // the median of the untraced calls before it (0 on a GPU)
};

// On the CPU, a pass that ran in another state of the machine than the samples (its median
// call beyond costmatrix::kStateFactor of the measured median) is traced again, up to
// kPasses passes; where none agrees, the nearest is kept. trace.call_over_median says how far
// the kept pass's median call (tracer included) is from the measured median: on calls of a
// few microseconds the tracer's own cost alone goes beyond the factor, so this is a figure to
// read, not a failure. On a GPU the calls' wall time is not the device time the samples are,
// so there is one pass.
//
// On the CPU each pass comes right after as many untraced calls, timed the same way (wall time
// per call): trace.overhead is the kept pass's median call over theirs, what tracing added to
// the calls the matrix shows, measured side by side in time, so a change of the machine's
// state between the samples and the pass does not enter it.
KeptPass trace_until_same_state(const std::function<at::Tensor()>& work,
                                const trace::Options& opts, double median, bool cuda) {
  constexpr int kPasses = 3;
  KeptPass kept;
  double off = 0;  // |log(pass median call / measured median)| of the kept pass
  for (bool agreed = false; !agreed && kept.passes < (cuda ? 1 : kPasses);) {
    const double untraced = cuda ? 0 : median_untraced_call_ns(work, opts.calls);
    trace::Trace pass = trace::record([&] { work(); }, opts);
    ++kept.passes;
    const double call = costmatrix::median_call_ns(pass);
    agreed = cuda || costmatrix::same_state(call, median);
    const double distance = call > 0 && median > 0 ? std::abs(std::log(call / median)) : 0;
    if (kept.passes == 1 || agreed || distance < off) {
      kept.trace = std::move(pass);
      off = distance;
      kept.untraced_ns = untraced;
    }
  }
  return kept;
}

// The cost matrix and what the kept pass says of itself: passes, calls kept, the traced calls'
// CPU time and their distance from the median, tracing overhead, memory peaks, counters.
void add_trace_results(const KeptPass& kept, bool cuda, core::CaseResult& r) {
  const trace::Trace& t = kept.trace;
  const double median = r.summary.median_ns;
  r.metrics["trace.passes"] = kept.passes;
  const double kept_call = costmatrix::median_call_ns(t);
  if (!cuda && median > 0 && kept_call > 0) r.metrics["trace.call_over_median"] = kept_call / median;
  if (!cuda && kept.untraced_ns > 0 && kept_call > 0)
    r.metrics["trace.overhead"] = kept_call / kept.untraced_ns;
  r.cost = costmatrix::build(t);
  r.kernels = costmatrix::kernel_set(r.cost, cuda);
  r.metrics["trace.calls"] = t.calls;
  const auto kept_calls = costmatrix::kept_calls(t);
  r.metrics["trace.calls_kept"] =
      kept_calls.empty() ? t.calls
                         : static_cast<double>(
                               std::count(kept_calls.begin(), kept_calls.end(), true));
  // The outermost rows' CPU total per call: what the traced calls cost, to set beside the median.
  double call_ns = 0;
  for (const auto& row : r.cost)
    if (row.parent.empty() && row.op != costmatrix::kNoOp) call_ns += row.cpu_total_ns;
  r.metrics["trace.call_cpu_ns"] = call_ns;
  for (const auto& [device, bytes] : t.peak_bytes)
    r.metrics["memory.peak_bytes." + device] = double(bytes);
  for (const auto& [name, value] : t.counters) r.metrics["counters." + name] = value;
  for (const auto& note : t.notes)
    if (note.rfind("hardware counters", 0) == 0)
      r.message += (r.message.empty() ? "" : "; ") + note;
}

// The trace as Chrome/Perfetto JSON in dir, named after the case key ('/' made '_').
void write_perfetto(const std::string& dir, const std::string& key, const trace::Trace& t) {
  std::string name = key;
  for (char& ch : name)
    if (ch == '/') ch = '_';
  const std::string path = dir + "/" + name + ".json";
  std::ofstream out(path);
  if (!(out << costmatrix::perfetto_json(t)))
    throw util::EnvironmentError(path + ": cannot write the Perfetto trace");
}

// A kernel case's roofline figures and bound label, or a block or layer case's attention share.
void add_roofline_or_share(const core::Case& c, const env::Description& env, bool cuda,
                           const trace::Trace& t, const TraceOptions& options,
                           core::CaseResult& r) {
  double peak_gbps = c.hardware.peak_gbps.value_or(0);
  double peak_tflops = c.hardware.peak_tflops.value_or(0);
  if (cuda) {
    const int index = std::max<int>(0, device_of(c).index());
    if (index < static_cast<int>(env.devices.size())) {
      const auto& dev = env.devices[index];
      if (peak_gbps <= 0) peak_gbps = dev.peak_gbps;
      if (peak_tflops <= 0) peak_tflops = env::peak_tflops(dev, c.dtype);
    }
  }
  if (c.level == core::Level::kernel && !cuda && (peak_gbps <= 0 || peak_tflops <= 0)) {
    // A CPU has no datasheet we read: its peaks are measured once per machine (cpu_peaks.h).
    // Its fp32 FLOP/s, which an fp32 GEMM's peak bounds, tells whether the cached peak is low.
    const double seconds = r.summary.median_ns * 1e-9;
    const bool fp32 = c.dtype == core::DType::fp32 && seconds > 0;
    const env::CpuPeaks probed =
        cpu_peaks(env, fp32 ? kernel::attention_flops(c) / seconds / 1e12 : 0);
    if (peak_gbps <= 0) peak_gbps = probed.gbps;
    if (peak_tflops <= 0) peak_tflops = probed.tflops;
    r.metrics["roofline.peaks_probed"] = 1;
  }
  if (c.level == core::Level::kernel) {
    // The time is the measured median, not the traced calls (they carry the tracer's cost); the
    // trace gives only the device's busy share of its window, which the launch rule needs.
    costmatrix::RooflineInput in;
    in.flops = kernel::attention_flops(c);
    in.bytes = kernel::attention_bytes(c);
    in.seconds = r.summary.median_ns * 1e-9;
    in.peak_tflops = peak_tflops;
    in.peak_gbps = peak_gbps;
    if (!t.device.empty()) {
      in.busy_ns = costmatrix::device_busy_ns(t);
      in.wall_ns = costmatrix::wall_ns(t);
    }
    const costmatrix::Roofline roof = costmatrix::classify(in);
    for (const auto& [k, v] : costmatrix::metrics(roof)) r.metrics.try_emplace("roofline." + k, v);
    if (!roof.bound.empty()) r.metrics[costmatrix::bound_metric(roof.bound)] = 1;
  } else if (options.attention_share) {
    r.metrics["attention.share"] = costmatrix::share_of(t, attention_scope(c.kernel));
  } else if (const double own = costmatrix::share_of(t, costmatrix::is_attention_op); own > 0) {
    r.metrics["attention.share"] = own;
    r.metrics["attention.share_from_ops"] = 1;
  }
}

}  // namespace

void traced_pass(const core::Case& c, const env::Description& env,
                 const std::function<at::Tensor()>& work, core::CaseResult& r,
                 const TraceOptions& options) {
  const bool cuda = c.hardware.device.rfind("cuda", 0) == 0;
  trace::Options opts;
  std::string why_not;
  opts.device = cuda && trace::device_tracing_available(&why_not);
  opts.hardware_counters = options.hardware_counters && opts.device;
  opts.calls = c.measure.trace_calls;
  // One untraced call first: whatever the first call after the timed samples does once (a
  // workspace, a cache) is not what the matrix should show.
  work();
  const KeptPass kept = trace_until_same_state(work, opts, r.summary.median_ns, cuda);
  add_trace_results(kept, cuda, r);
  if (!options.perfetto_dir.empty()) write_perfetto(options.perfetto_dir, c.key, kept.trace);
  add_roofline_or_share(c, env, cuda, kept.trace, options, r);
}

}  // namespace attnprof::runner
