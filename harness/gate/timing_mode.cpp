// A case's timing mode from its result's metrics, and its description for reports
// (timing_mode.h).
#include "harness/gate/timing_mode.h"

namespace attnprof::gate {

std::string timing_mode(const core::CaseResult& r) {
  return timing_mode(r.spec.hardware.device, r.metrics);
}

std::string timing_mode(const std::string& device, const std::map<std::string, double>& metrics) {
  if (device.rfind("cuda", 0) != 0) return "cpu.wall";
  auto batch = metrics.find("measure.graph_batch");
  auto cupti = metrics.find("measure.cupti_fraction");
  if (batch == metrics.end() || cupti == metrics.end()) return "";
  const std::string calls = batch->second > 0 ? "graph" : "cold";
  const std::string time = cupti->second >= 1 ? "cupti" : cupti->second <= 0 ? "events" : "mixed";
  return "cuda." + calls + "." + time;
}

std::string describe_timing_mode(const std::string& mode) {
  if (mode == "cpu.wall") return "CPU wall clock";
  const std::string prefix = "cuda.";
  if (mode.rfind(prefix, 0) != 0) return mode.empty() ? "unknown" : mode;
  const std::string rest = mode.substr(prefix.size());
  const auto dot = rest.find('.');
  if (dot == std::string::npos) return mode;
  const std::string calls = rest.substr(0, dot), time = rest.substr(dot + 1);
  const std::string c = calls == "graph"  ? "CUDA-graph batches"
                        : calls == "cold" ? "single cold calls"
                                          : calls;
  const std::string t = time == "cupti"    ? "CUPTI kernel time"
                        : time == "events" ? "CUDA event time"
                        : time == "mixed"  ? "partly CUPTI, partly CUDA event time"
                                           : time;
  return c + ", " + t;
}

}  // namespace attnprof::gate
