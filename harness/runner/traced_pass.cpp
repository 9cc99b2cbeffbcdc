#include "harness/runner/traced_pass.h"

#include <fstream>

#include "harness/costmatrix/cost_matrix.h"
#include "harness/costmatrix/perfetto.h"
#include "harness/costmatrix/roofline.h"
#include "harness/kernel/registry.h"
#include "harness/runner/workload.h"
#include "harness/trace/tracer.h"
#include "harness/util/error.h"

namespace attnprof::runner {

void traced_pass(const core::Case& c, const env::Description& env,
                 const std::function<at::Tensor()>& work, core::CaseResult& r,
                 const TraceOptions& options) {
  const bool cuda = c.hardware.device.rfind("cuda", 0) == 0;
  trace::Options opts;
  std::string why_not;
  opts.device = cuda && trace::device_tracing_available(&why_not);
  opts.hardware_counters = options.hardware_counters && opts.device;
  trace::Trace t = trace::record([&] { work(); }, opts);
  r.cost = costmatrix::build(t);
  for (const auto& [device, bytes] : t.peak_bytes)
    r.metrics["memory.peak_bytes." + device] = double(bytes);
  for (const auto& [name, value] : t.counters) r.metrics["counters." + name] = value;
  for (const auto& note : t.notes)
    if (note.rfind("hardware counters", 0) == 0)
      r.message += (r.message.empty() ? "" : "; ") + note;
  if (!options.perfetto_dir.empty()) {
    std::string name = c.key;
    for (char& ch : name)
      if (ch == '/') ch = '_';
    const std::string path = options.perfetto_dir + "/" + name + ".json";
    std::ofstream out(path);
    if (!(out << costmatrix::perfetto_json(t)))
      throw util::EnvironmentError(path + ": cannot write the Perfetto trace");
  }

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
  if (c.level == core::Level::kernel) {
    costmatrix::Roofline roof = costmatrix::classify(
        t, kernel::attention_flops(c), kernel::attention_bytes(c), peak_tflops, peak_gbps);
    // The timed samples' figures stay; the traced pass adds the fractions and the bound.
    for (const auto& [k, v] : costmatrix::metrics(roof)) r.metrics.try_emplace("roofline." + k, v);
    r.metrics["roofline.busy_fraction"] = roof.busy_fraction;
    if (!roof.bound.empty()) r.backend += (r.backend.empty() ? "" : "; ") + roof.bound;
  } else {
    r.metrics["attention.share"] = costmatrix::share_of(t, attention_scope(c.kernel));
  }
}

}  // namespace attnprof::runner
