// Roofline figures and the bound classification (roofline.h).
#include "harness/costmatrix/roofline.h"

#include <fmt/format.h>

#include "harness/costmatrix/cost_matrix.h"

namespace attnprof::costmatrix {

Roofline classify(const RooflineInput& in) {
  Roofline r;
  r.flops = in.flops;
  r.bytes = in.bytes;
  r.seconds = in.seconds;
  r.peak_tflops = in.peak_tflops;
  r.peak_gbps = in.peak_gbps;
  if (in.seconds > 0) {
    r.achieved_tflops = in.flops / in.seconds / 1e12;
    r.achieved_gbps = in.bytes / in.seconds / 1e9;
  }
  if (in.peak_tflops > 0) r.compute_fraction = r.achieved_tflops / in.peak_tflops;
  if (in.peak_gbps > 0) r.bandwidth_fraction = r.achieved_gbps / in.peak_gbps;
  if (in.bytes > 0) r.intensity = in.flops / in.bytes;
  if (in.peak_tflops > 0 && in.peak_gbps > 0)
    r.ridge_intensity = in.peak_tflops * 1e12 / (in.peak_gbps * 1e9);
  if (in.wall_ns > 0 && in.busy_ns > 0) r.busy_fraction = in.busy_ns / in.wall_ns;

  // The launch rule comes first: when the device idles most of the time, neither roof is what
  // the case is hitting.
  if (in.wall_ns > 0 && in.busy_ns > 0 && r.busy_fraction < kLaunchBoundBusyFraction) {
    r.bound = "launch-bound";
    r.reason = fmt::format("device busy {:.1f}% of wall time (< {:.0f}%)", 100 * r.busy_fraction,
                           100 * kLaunchBoundBusyFraction);
    return r;
  }
  if (r.ridge_intensity <= 0 || in.bytes <= 0 || in.flops <= 0) {
    r.reason = in.peak_tflops > 0 && in.peak_gbps > 0 ? "no FLOP or byte model for the case"
                                                      : "device peaks unknown";
    return r;
  }
  if (r.intensity < r.ridge_intensity) {
    r.bound = "memory-bound";
    r.reason =
        fmt::format("{:.1f} FLOP/B below the ridge at {:.1f} FLOP/B; {:.1f}% of peak bandwidth",
                    r.intensity, r.ridge_intensity, 100 * r.bandwidth_fraction);
  } else {
    r.bound = "compute-bound";
    r.reason =
        fmt::format("{:.1f} FLOP/B at or above the ridge at {:.1f} FLOP/B; {:.1f}% of peak FLOP/s",
                    r.intensity, r.ridge_intensity, 100 * r.compute_fraction);
  }
  return r;
}

Roofline classify(const trace::Trace& t, double flops, double bytes, double peak_tflops,
                  double peak_gbps) {
  RooflineInput in;
  in.flops = flops;
  in.bytes = bytes;
  in.peak_tflops = peak_tflops;
  in.peak_gbps = peak_gbps;
  in.wall_ns = wall_ns(t);
  if (!t.device.empty()) {
    in.busy_ns = device_busy_ns(t);
    in.seconds = in.busy_ns / 1e9;
  } else {
    in.seconds = in.wall_ns / 1e9;
  }
  return classify(in);
}

std::string bound_metric(const std::string& bound) {
  std::string key = "roofline." + bound;
  for (char& ch : key)
    if (ch == '-') ch = '_';
  return key;
}

std::map<std::string, double> metrics(const Roofline& r) {
  std::map<std::string, double> m;
  if (r.seconds > 0) {
    if (r.flops > 0) m["throughput.tflops"] = r.achieved_tflops;
    if (r.bytes > 0) m["bandwidth.achieved_gbps"] = r.achieved_gbps;
  }
  if (r.compute_fraction > 0) m["throughput.fraction_of_peak"] = r.compute_fraction;
  if (r.bandwidth_fraction > 0) m["bandwidth.fraction_of_peak"] = r.bandwidth_fraction;
  if (r.intensity > 0) m["intensity_flop_per_byte"] = r.intensity;
  if (r.busy_fraction > 0) m["device.busy_fraction"] = r.busy_fraction;
  return m;
}

}  // namespace attnprof::costmatrix
