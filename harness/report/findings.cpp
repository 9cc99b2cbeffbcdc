// Findings and an A/B's memory figures as the reports show them (findings.h).
#include "harness/report/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "harness/core/metric_names.h"
#include "harness/costmatrix/summary.h"

namespace attnprof::report {
namespace {

// How much a memory figure must change to be worth a line (MemoryDiff::moved). A CPU worker's
// resident-set growth and page faults come from one pass per side and carry the process's own
// state (which pages it had touched before): over 300 case pairs whose code did not change (A/A
// and planted time-only slowdowns, 2 cores, CPU), they differed by up to 3.5 faults per call and
// 2.25 MiB of growth, which floors of 1 fault and 1 MiB called a move in 1 case of 10. A real
// change is far beyond those: an allocation above the worker's mmap threshold (32 MiB) faults
// thousands of pages every call, and a leak grows by its size times the calls.
double floor_of(std::string_view metric) {
  if (metric == core::kRssGrowthMetric) return 4 << 20;
  if (metric == core::kMinorFaultsMetric || metric == core::kMajorFaultsMetric) return 16;
  if (metric.ends_with("_bytes")) return 1 << 20;
  if (metric == core::kReservedRatioMetric) return 0.05;
  return 1;  // retries, segments
}

bool moved(std::string_view metric, double base, double head) {
  const double lo = std::min(std::abs(base), std::abs(head));
  const double hi = std::max(std::abs(base), std::abs(head));
  return std::abs(head - base) >= floor_of(metric) && (lo == 0 || hi / lo > 1.5);
}

std::string_view option_of(const gate::Finding& f) {
  return f.kind == "kernels changed" ? "--fail-on-kernel-change" : "--fail-on-accuracy";
}

Table memory_table(const AbDetail& ab, bool moved_only, bool markdown) {
  Table t({"case", "figure", ab.base_label, ab.head_label});
  t.set_key(0);
  const std::string q = markdown ? "`" : "";
  for (const auto& c : ab.cases)
    for (const auto& m : c.memory)
      if (!moved_only || m.moved)
        t.add({q + c.key + q, m.metric, costmatrix::format_memory(m.metric, m.base),
               costmatrix::format_memory(m.metric, m.head)});
  return t;
}

}  // namespace

std::vector<MemoryDiff> diff_memory(const core::CaseResult& base, const core::CaseResult& head) {
  std::vector<MemoryDiff> out;
  for (const char* name : core::kFragmentationMetrics) {
    auto b = base.metrics.find(name), h = head.metrics.find(name);
    if (b == base.metrics.end() || h == head.metrics.end()) continue;
    out.push_back({name, b->second, h->second, moved(name, b->second, h->second)});
  }
  return out;
}

std::string finding_counts(const std::vector<gate::CaseVerdict>& verdicts) {
  int kernels = 0, accuracy = 0, energy = 0;
  for (const auto& v : verdicts)
    for (const auto& f : v.findings.list)
      ++(f.kind == "kernels changed"  ? kernels
         : f.kind == "energy changed" ? energy
                                      : accuracy);
  if (kernels + accuracy + energy == 0) return "";
  return fmt::format("findings: {} kernels changed, {} accuracy changed{}", kernels, accuracy,
                     energy ? fmt::format(", {} energy changed", energy) : "");
}

std::string finding_text(const gate::Finding& f) {
  return f.fails ? fmt::format("{} (fails the gate: {})", f.text, option_of(f)) : f.text;
}

std::string findings_console(const std::vector<gate::CaseVerdict>& verdicts) {
  // Whole lines, however wide: like the notes, they are what a person greps a CI log for.
  std::string out;
  for (const auto& v : verdicts)
    for (const auto& f : v.findings.list) out += "  " + v.key + ": " + finding_text(f) + "\n";
  return out.empty() ? "" : "findings beside the time verdicts (what ran, how accurate):\n" + out;
}

std::string findings_markdown(const std::vector<gate::CaseVerdict>& verdicts) {
  Table t({"case", "finding", "gate"});
  bool any = false;
  for (const auto& v : verdicts)
    for (const auto& f : v.findings.list) {
      t.add({"`" + v.key + "`", f.text, f.fails ? "fails" : "warning"});
      any = true;
    }
  return any ? "### Findings beside the time verdicts\n\n" + t.render_markdown(300) + "\n" : "";
}

std::string memory_console(const AbDetail& ab, std::size_t width) {
  const bool any = std::any_of(ab.cases.begin(), ab.cases.end(), [](const AbCase& c) {
    return std::any_of(c.memory.begin(), c.memory.end(), [](const auto& m) { return m.moved; });
  });
  if (!any) return "";
  return "memory figures that moved between the sides (over the measured calls):\n" +
         memory_table(ab, true, false).render(width);
}

std::string memory_markdown(const AbDetail& ab) {
  const Table t = memory_table(ab, false, true);
  if (t.empty()) return "";
  return "<details><summary>Memory over the measured calls, base and head</summary>\n\n" +
         t.render_markdown(300) + "\n</details>\n\n";
}

}  // namespace attnprof::report
