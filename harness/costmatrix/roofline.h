// Achieved FLOP/s and bandwidth against the device's peak, and what bounds the case. The launch
// rule: when the device is busy less than 60% of the wall time, the
// kernels are not what limits the case; launches and the host are.
#pragma once

#include <map>
#include <string>

#include "harness/trace/model.h"

namespace attnprof::costmatrix {

inline constexpr double kLaunchBoundBusyFraction = 0.60;

struct RooflineInput {
  double flops = 0;        // the kernel's FLOP model for the case
  double bytes = 0;        // its byte model (or DRAM bytes from hardware counters)
  double seconds = 0;      // time the work took (device busy time on a GPU, wall on a CPU)
  double peak_tflops = 0;  // 0: unknown
  double peak_gbps = 0;    // 0: unknown
  double busy_ns = 0;      // device busy time; with wall_ns, decides launch-bound. 0: not known
  double wall_ns = 0;
};

struct Roofline {
  double flops = 0, bytes = 0, seconds = 0, peak_tflops = 0, peak_gbps = 0;
  double achieved_tflops = 0, achieved_gbps = 0;
  double compute_fraction = 0, bandwidth_fraction = 0;  // of peak; 0 where the peak is unknown
  double intensity = 0;                                 // FLOP per byte
  double ridge_intensity = 0;  // peak FLOP/s over peak bytes/s; 0 where a peak is unknown
  double busy_fraction = 0;    // device busy / wall; 0 where not known
  // "memory-bound" | "compute-bound" | "launch-bound"; empty when the inputs cannot decide.
  std::string bound;
  std::string reason;  // one line saying why, for reports
};

Roofline classify(const RooflineInput& in);

// From a trace: seconds = device busy time (device records present) or the wall window;
// busy and wall from the trace, so the launch rule applies on a GPU.
Roofline classify(const trace::Trace& t, double flops, double bytes, double peak_tflops,
                  double peak_gbps);

// The metric that carries a bound label, set to 1 in CaseResult::metrics: "memory-bound" ->
// "roofline.memory_bound". A label is its own metric so that history, export and reports read it
// without parsing another field.
std::string bound_metric(const std::string& bound);

// Named figures ("throughput.tflops", "bandwidth.achieved_gbps", "intensity_flop_per_byte",
// ...) that the traced pass files under "roofline." in CaseResult::metrics; figures that are
// unknown are left out.
std::map<std::string, double> metrics(const Roofline& r);

}  // namespace attnprof::costmatrix
