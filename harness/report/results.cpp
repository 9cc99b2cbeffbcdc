// The results table `attnprof run` prints, one row per case, and its status counts
// (results.h).
#include "harness/report/results.h"

#include <fmt/format.h>

#include <array>
#include <optional>

#include "harness/core/metric_names.h"
#include "harness/core/stability.h"
#include "harness/report/format.h"
#include "harness/util/format.h"
#include "harness/util/table.h"

namespace attnprof::report {

std::string results_table(const core::Run& run, std::size_t width) {
  Table t({"case", "status", "median", "±ci", "samples", "TFLOP/s", "GB/s", "note"});
  t.set_key(0);
  t.set_detail(7);
  t.set_drop_order({6, 5, 3, 4});  // GB/s, TFLOP/s, ±ci, samples: the status and median stay
  for (const auto& r : run.cases) {
    std::string median, ci, n, tflops, gbps;
    if (r.status == core::CaseStatus::ok && r.summary.n > 0) {
      median = util::format_duration(r.summary.median_ns);
      const double half = (r.summary.ci_high_ns - r.summary.ci_low_ns) / 2;
      ci = fmt::format("{:.2f}%", 100 * half / r.summary.median_ns);
      n = std::to_string(r.summary.n);
      if (auto it = r.metrics.find("throughput.tflops"); it != r.metrics.end())
        tflops = fmt::format("{:.3f}", it->second);
      if (auto it = r.metrics.find("bandwidth.achieved_gbps"); it != r.metrics.end())
        gbps = fmt::format("{:.1f}", it->second);
    }
    t.add({r.spec.key, core::to_string(r.status), median, ci, n, tflops, gbps, case_note(r, true)});
  }
  return t.render(width);
}

// A torch.compile variant's compile (worker/kernel/variants/python.cpp): how long, from which
// cache, and into how many graphs, "" for any other case.
std::string compile_note(const core::CaseResult& r) {
  auto metric = [&r](const char* name) -> std::optional<double> {
    if (auto it = r.metrics.find(name); it != r.metrics.end()) return it->second;
    return std::nullopt;
  };
  const auto ms = metric("compile.time_ms");
  if (!ms) return "";
  auto count = [](double n, const char* one, const char* many) {
    return fmt::format("{:.0f} {}", n, n == 1 ? one : many);
  };
  std::string note = fmt::format("compiled in {} ({} cache): {}, {}",
                                 util::format_duration(*ms * 1e6),
                                 r.spec.compile_cache_warm ? "warm" : "fresh",
                                 count(metric("compile.graphs").value_or(0), "graph", "graphs"),
                                 count(metric("compile.graph_breaks").value_or(0), "graph break",
                                       "graph breaks"));
  if (const auto re = metric("compile.recompiles"); re && *re > 0)
    note += ", " + count(*re, "recompile", "recompiles") + " after the first call";
  return note;
}

// What a block-sparse kernel's figures add to its useful TFLOP/s (flex: python_builtins.py): its
// block mask's build time, outside the samples, and how much more than the useful FLOPs it
// executes. "" for other kernels.
std::string block_mask_note(const core::CaseResult& r) {
  std::string note;
  if (auto it = r.metrics.find("block_mask.build_ms"); it != r.metrics.end())
    note = fmt::format("block mask built in {}", util::format_duration(it->second * 1e6));
  const auto useful = r.metrics.find("throughput.tflops");
  const auto executed = r.metrics.find("throughput.executed_tflops");
  if (useful != r.metrics.end() && executed != r.metrics.end() && useful->second > 0)
    note += fmt::format("{}executes {:.2f}x the useful FLOPs", note.empty() ? "" : ", ",
                        executed->second / useful->second);
  return note;
}

std::string case_note(const core::CaseResult& r, bool backend) {
  std::string note = r.message;
  if (backend && note.empty() && !r.backend.empty() && r.backend != r.spec.kernel)
    note = "backend: " + r.backend;
  if (const std::string compiled = compile_note(r); !compiled.empty())
    note += (note.empty() ? "" : "; ") + compiled;
  if (const std::string flex = block_mask_note(r); !flex.empty())
    note += (note.empty() ? "" : "; ") + flex;
  // A block or layer case's headline figure: how much of it the attention is.
  if (auto it = r.metrics.find("attention.share"); it != r.metrics.end())
    note += fmt::format("{}attention {:.1f}% of the {}", note.empty() ? "" : "; ", 100 * it->second,
                        core::to_string(r.spec.level));
  // On a GPU with NVML's energy counter: what a call cost, and the power it drew.
  if (auto j = r.metrics.find(core::kEnergyPerCallMetric); j != r.metrics.end()) {
    note += fmt::format("{}energy {:.3g} J per call", note.empty() ? "" : "; ", j->second);
    if (auto w = r.metrics.find(core::kAveragePowerMetric); w != r.metrics.end())
      note += fmt::format(" at {:.0f} W", w->second);
  }
  // A figure whose correctness nobody checked says so before anything else it says.
  if (core::not_checked(r)) note = core::kNotChecked + (note.empty() ? "" : "; " + note);
  // First: a busy machine's figure is not the kernel's (core/stability.h).
  if (const core::Stability st = core::stability(r); st.unstable)
    note = st.note + (note.empty() ? "" : "; " + note);
  if (r.status == core::CaseStatus::ok && r.summary.n > 0 && !r.summary.converged)
    note += note.empty() ? "not converged" : "; not converged";
  return note;
}

std::string status_counts(const core::Run& run, std::size_t width) {
  std::array<int, 4> k{};
  int unstable = 0, unchecked = 0;
  for (const auto& r : run.cases) {
    ++k[static_cast<int>(r.status)];
    unstable += core::stability(r).unstable;
    unchecked += core::not_checked(r);
  }
  std::string out = fmt::format("{} cases: {} ok, {} failed, {} skipped, {} error",
                                run.cases.size(), k[0], k[1], k[2], k[3]);
  if (unchecked > 0) out += fmt::format("; {} {}", unchecked, core::kNotChecked);
  if (unstable > 0)
    out += fmt::format(
        "; {} unstable: a busy machine or GPU disturbed them, their figures are "
        "not the kernels' (baselines leave them out)",
        unstable);
  if (width == 0 || util::display_width(out) <= width) return out;
  std::string wrapped;
  for (const std::string& line : util::wrap(out, width))
    wrapped += (wrapped.empty() ? "" : "\n") + line;
  return wrapped;
}

}  // namespace attnprof::report
