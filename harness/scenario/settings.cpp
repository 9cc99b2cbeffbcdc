// Reading a scenario's hardware:, measure: and gate: blocks over core/types.h's defaults
// (settings.h).
#include "harness/scenario/settings.h"

#include <fmt/format.h>

#include <regex>

#include "harness/scenario/values.h"

namespace attnprof::scenario {

core::Hardware read_hardware(const Node& n, Diags& d) {
  core::Hardware h;
  if (!check_map(n, "hardware",
                 {"device", "gpu", "threads", "clock_policy", "peak_gbps", "peak_tflops"}, d))
    return h;
  if (const Node* v = n.find("device")) {
    static const std::regex device_re("cpu|cuda(:[0-9]+)?");
    if (v->is_scalar() && std::regex_match(v->scalar, device_re))
      h.device = v->scalar;
    else
      d.error(v->loc, fmt::format("device: expected cpu, cuda or cuda:N, {}", got(*v)));
  }
  if (const Node* v = n.find("gpu")) {
    if (auto s = read_string(*v, "gpu", d)) {
      try {
        std::regex re(*s);
        h.gpu_pattern = *s;
      } catch (const std::regex_error& e) {
        d.error(v->loc, fmt::format("gpu: invalid pattern \"{}\": {}", *s, e.what()));
      }
      if (h.device == "cpu")
        d.error(v->loc, "gpu: a GPU pattern applies only to a cuda device (device is cpu)");
    }
  }
  if (const Node* v = n.find("threads"))
    if (auto t = read_int(*v, "threads", 0, 4096, d)) h.threads = static_cast<int>(*t);
  if (const Node* v = n.find("clock_policy"))
    if (auto s = read_choice(*v, "clock_policy", {"record", "require-locked"}, d))
      h.clock_policy = *s;
  if (const Node* v = n.find("peak_gbps")) h.peak_gbps = read_positive(*v, "peak_gbps", d);
  if (const Node* v = n.find("peak_tflops")) h.peak_tflops = read_positive(*v, "peak_tflops", d);
  return h;
}

core::MeasureSettings read_measure(const Node& n, Diags& d) {
  core::MeasureSettings m;
  if (!check_map(n, "measure",
                 {"warmup", "warmup_ms", "min_samples", "max_samples", "max_noise", "time_budget",
                  "timeout_s", "trace", "trace_calls", "max_descheduled", "max_descheduled_shift",
                  "max_throttled", "l2"},
                 d))
    return m;
  // Two spellings each for warm-up and budget: a duration with its unit ("200ms"), or the
  // unit in the key ("warmup_ms: 200"), as the design sketch writes them.
  auto duration = [&](const char* a, const char* b, const char* b_unit) -> std::optional<double> {
    const Node* x = n.find(a);
    const Node* y = n.find(b);
    if (x && y) {
      d.error(y->key_loc, fmt::format("{} and {} both set; keep one", a, b));
      return std::nullopt;
    }
    if (x) return read_duration_s(*x, a, "", d);
    if (y) return read_duration_s(*y, b, b_unit, d);
    return std::nullopt;
  };
  if (auto s = duration("warmup", "warmup_ms", "ms")) m.warmup_ms = *s * 1e3;
  if (auto s = duration("time_budget", "timeout_s", "s")) {
    if (*s <= 0)
      d.error(n.find("time_budget") ? n.find("time_budget")->loc : n.find("timeout_s")->loc,
              "time budget must be positive");
    else
      m.time_budget_s = *s;
  }
  constexpr long long most = 10'000'000;
  if (const Node* v = n.find("min_samples"))
    if (auto x = read_int(*v, "min_samples", 1, most, d)) m.min_samples = static_cast<int>(*x);
  if (const Node* v = n.find("max_samples"))
    if (auto x = read_int(*v, "max_samples", 1, most, d)) m.max_samples = static_cast<int>(*x);
  if (m.min_samples > m.max_samples)
    d.error(n.loc,
            fmt::format("min_samples ({}) exceeds max_samples ({})", m.min_samples, m.max_samples));
  if (const Node* v = n.find("max_noise"))
    if (auto x = read_percent(*v, "max_noise", d)) m.target_rel_ci = *x;
  if (const Node* v = n.find("trace"))
    if (auto x = read_bool(*v, "trace", d)) m.trace = *x;
  if (const Node* v = n.find("trace_calls"))
    if (auto x = read_int(*v, "trace_calls", 1, 10'000, d)) m.trace_calls = static_cast<int>(*x);
  if (const Node* v = n.find("max_descheduled"))
    if (auto x = read_percent(*v, "max_descheduled", d)) m.max_descheduled = *x;
  if (const Node* v = n.find("max_descheduled_shift"))
    if (auto x = read_positive(*v, "max_descheduled_shift", d)) m.max_descheduled_shift = *x;
  if (const Node* v = n.find("max_throttled"))
    if (auto x = read_percent(*v, "max_throttled", d)) m.max_throttled = *x;
  if (const Node* v = n.find("l2"))
    if (auto s = read_choice(*v, "l2", {"cold", "warm"}, d)) m.l2 = *s;
  return m;
}

core::GateSettings read_gate(const Node& n, Diags& d) {
  core::GateSettings g;
  if (!check_map(n, "gate", {"tolerance"}, d)) return g;
  if (const Node* v = n.find("tolerance"))
    if (auto x = read_percent(*v, "tolerance", d)) g.tolerance = *x;
  return g;
}

}  // namespace attnprof::scenario
