// Findings beside the time verdict (findings.h): a changed kernel set, a less accurate output.
#include "harness/gate/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "harness/core/metric_names.h"

namespace attnprof::gate {
namespace {

// Names a sentence lists before it counts the rest: GPU kernel names run to hundreds of
// characters, and the JSON report has every one.
constexpr std::size_t kNamesShown = 4;

std::string names(const std::vector<std::string>& v) {
  if (v.empty()) return "(none)";
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < kNamesShown; ++i) out += (i ? ", " : "") + v[i];
  if (v.size() > kNamesShown) out += fmt::format(" and {} more", v.size() - kNamesShown);
  return out;
}

// The names of `a` that `b` lacks, each once, in a's order (outermost first, as the worker lists
// them): compared as sets, whatever order or repeats a record holds.
std::vector<std::string> only_in(const std::vector<std::string>& a,
                                 const std::vector<std::string>& b) {
  const std::set<std::string> other(b.begin(), b.end());
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const auto& name : a)
    if (!other.count(name) && seen.insert(name).second) out.push_back(name);
  return out;
}

KernelChange kernel_change(const Traits& base, const Traits& head) {
  KernelChange k;
  if (!base.backend.empty() && !head.backend.empty()) {
    k.known = true;
    k.base_backend = base.backend;
    k.head_backend = head.backend;
    k.changed = base.backend != head.backend;
  }
  if (base.kernels && head.kernels) {
    k.known = true;
    k.removed = only_in(*base.kernels, *head.kernels);
    k.added = only_in(*head.kernels, *base.kernels);
    k.changed = k.changed || !k.removed.empty() || !k.added.empty();
  }
  return k;
}

std::string kernel_sentence(const KernelChange& k) {
  std::string s = "kernels changed: ";
  const bool sets = !k.removed.empty() || !k.added.empty();
  if (sets) s += names(k.removed) + " -> " + names(k.added);
  if (k.base_backend != k.head_backend)
    s += fmt::format("{}backend {} -> {}", sets ? "; " : "", k.base_backend, k.head_backend);
  return s;
}

AccuracyChange accuracy_change(const Traits& base, const Traits& head, core::DType dtype,
                               double factor) {
  AccuracyChange a;
  if (base.reference.empty() || base.reference == "none" || base.reference != head.reference ||
      !base.max_abs_error || !head.max_abs_error)
    return a;
  a.known = true;
  a.base_max = *base.max_abs_error;
  a.head_max = *head.max_abs_error;
  a.base_mean = base.mean_abs_error;
  a.head_mean = head.mean_abs_error;
  a.floor = accuracy_floor(dtype);
  a.factor = factor;
  auto grew = [&](double b, double h) { return h > factor * std::max(b, a.floor); };
  a.changed = grew(a.base_max, a.head_max) ||
              (a.base_mean && a.head_mean && grew(*a.base_mean, *a.head_mean));
  return a;
}

std::string accuracy_sentence(const AccuracyChange& a, core::DType dtype) {
  auto figure = [&](const char* what, double b, double h) {
    return fmt::format("{} abs error {:.3g} -> {:.3g} ({:.3g}x)", what, b, h,
                       h / std::max(b, a.floor));
  };
  std::string s = "accuracy changed: " + figure("max", a.base_max, a.head_max);
  if (a.base_mean && a.head_mean) s += ", " + figure("mean", *a.base_mean, *a.head_mean);
  return s + fmt::format(
                 "; more than {:g}x the baseline's (errors below {}'s epsilon {:.3g} count as "
                 "it), still within the check's tolerance",
                 a.factor, core::to_string(dtype), a.floor);
}

EnergyChange energy_change(const Traits& base, const Traits& head, double tolerance) {
  EnergyChange e;
  if (!base.joules_per_call || !head.joules_per_call || *base.joules_per_call <= 0) return e;
  e.known = true;
  e.base_j = *base.joules_per_call;
  e.head_j = *head.joules_per_call;
  e.tolerance = tolerance;
  e.changed = std::abs(e.head_j / e.base_j - 1) > tolerance;
  return e;
}

// Joules to 3 significant digits in the unit that keeps them readable: 0.7 J, 41.5 mJ.
std::string joules(double j) {
  return j >= 1 ? fmt::format("{:.3g} J", j) : fmt::format("{:.3g} mJ", j * 1e3);
}

std::string energy_sentence(const EnergyChange& e) {
  return fmt::format("energy changed: {} -> {} per call ({:+.1f}%, beyond {:g}%)",
                     joules(e.base_j), joules(e.head_j), 100 * (e.head_j / e.base_j - 1),
                     100 * e.tolerance);
}

CompileChange compile_change(const Traits& base, const Traits& head, double factor) {
  CompileChange c;
  if (!base.compile_ms || !head.compile_ms) return c;
  c.known = true;
  c.factor = factor;
  c.base_ms = *base.compile_ms;
  c.head_ms = *head.compile_ms;
  c.base_graphs = base.compile_graphs.value_or(0);
  c.head_graphs = head.compile_graphs.value_or(0);
  c.base_breaks = base.compile_graph_breaks.value_or(0);
  c.head_breaks = head.compile_graph_breaks.value_or(0);
  const double ratio = c.head_ms / std::max(c.base_ms, 1e-9);
  c.changed = ratio > factor || ratio < 1 / factor || c.head_breaks > c.base_breaks;
  return c;
}

std::string compile_sentence(const CompileChange& c) {
  auto seconds = [](double ms) { return fmt::format("{:.1f} s", ms / 1e3); };
  std::string s = fmt::format("compile changed: {} -> {} ({:.2f}x", seconds(c.base_ms),
                              seconds(c.head_ms), c.head_ms / std::max(c.base_ms, 1e-9));
  const double ratio = c.head_ms / std::max(c.base_ms, 1e-9);
  s += ratio > c.factor || ratio < 1 / c.factor ? fmt::format(", beyond {:g}x)", c.factor) : ")";
  s += fmt::format("; graphs {:.0f} -> {:.0f}, graph breaks {:.0f} -> {:.0f}", c.base_graphs,
                   c.head_graphs, c.base_breaks, c.head_breaks);
  if (c.head_breaks > c.base_breaks) s += " (a new graph break)";
  return s;
}

std::optional<double> metric(const core::CaseResult& r, const char* name) {
  if (auto it = r.metrics.find(name); it != r.metrics.end()) return it->second;
  return std::nullopt;
}

}  // namespace

Traits traits_of(const core::CaseResult& r) {
  Traits t;
  t.backend = r.backend;
  t.kernels = r.kernels;
  t.reference = r.reference;
  t.max_abs_error = r.max_abs_error;
  t.mean_abs_error = metric(r, core::kMeanAbsErrorMetric);
  t.compile_ms = metric(r, "compile.time_ms");
  t.compile_graphs = metric(r, "compile.graphs");
  t.compile_graph_breaks = metric(r, "compile.graph_breaks");
  t.joules_per_call = metric(r, core::kEnergyPerCallMetric);
  return t;
}

bool Findings::fails() const {
  return std::any_of(list.begin(), list.end(), [](const Finding& f) { return f.fails; });
}

double accuracy_floor(core::DType dtype) {
  switch (dtype) {
    case core::DType::fp16:
      return 0x1p-10;
    case core::DType::bf16:
      return 0x1p-7;
    case core::DType::fp32:
      break;
  }
  return 0x1p-23;
}

Findings find_changes(const Traits& base, const Traits& head, core::DType dtype,
                      const FindingRules& rules) {
  Findings f;
  f.kernels = kernel_change(base, head);
  f.accuracy = accuracy_change(base, head, dtype, rules.accuracy_factor);
  f.compile = compile_change(base, head, rules.compile_factor);
  if (f.kernels.changed)
    f.list.push_back({"kernels changed", kernel_sentence(f.kernels), rules.fail_on_kernel_change});
  if (f.compile.changed)
    f.list.push_back({"compile changed", compile_sentence(f.compile), rules.fail_on_compile});
  if (f.accuracy.changed)
    f.list.push_back(
        {"accuracy changed", accuracy_sentence(f.accuracy, dtype), rules.fail_on_accuracy});
  f.energy = energy_change(base, head, rules.energy_tolerance);
  if (f.energy.changed) f.list.push_back({"energy changed", energy_sentence(f.energy), false});
  return f;
}

}  // namespace attnprof::gate
