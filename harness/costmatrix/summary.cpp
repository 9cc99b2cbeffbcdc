// The lines under a case's cost matrix (summary.h).
#include "harness/costmatrix/summary.h"

#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "harness/core/metric_names.h"
#include "harness/util/format.h"

namespace attnprof::costmatrix {
namespace {

std::optional<double> metric(const core::CaseResult& r, const char* name) {
  auto it = r.metrics.find(name);
  return it == r.metrics.end() ? std::nullopt : std::optional<double>(it->second);
}

// "LABEL     TEXT" within `width` columns (0: one line), the rest of TEXT on lines under it,
// indented alike. Broken at spaces only: an op or kernel name is never cut (one longer than the
// width stands on a line of its own), so it can be searched for whole.
std::string labelled(std::string_view label, const std::string& text, std::size_t width) {
  constexpr std::size_t kIndent = 10;
  std::string out = fmt::format("{:<{}}", label, kIndent), line;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view word(text.data() + at, end - at);
    if (!line.empty() && width > 0 && kIndent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(kIndent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
    at = end + 1;
  }
  return out + line + "\n";
}

std::string kernels_line(const core::CaseResult& r, std::size_t width) {
  if (!r.kernels && r.backend.empty()) return "";
  const bool device = r.spec.hardware.device != "cpu";
  std::string line;
  if (r.kernels) {
    line += fmt::format("{} {}", r.kernels->size(), device ? "kernel(s)" : "ATen op(s)");
    for (std::size_t i = 0; i < r.kernels->size(); ++i) line += (i ? ", " : ": ") + (*r.kernels)[i];
  } else {
    line += "not recorded (no traced pass)";
  }
  if (!r.backend.empty()) line += fmt::format(" (backend {})", r.backend);
  return labelled("kernels", line, width);
}

std::string accuracy_line(const core::CaseResult& r, std::size_t width) {
  if (!r.max_abs_error) return "";
  std::string line = fmt::format("max abs error {:.3g}", *r.max_abs_error);
  if (auto mean = metric(r, core::kMeanAbsErrorMetric))
    line += fmt::format(", mean abs error {:.3g}", *mean);
  line += fmt::format(" against {}", r.reference.empty() ? "sdpa.math" : r.reference);
  return labelled("accuracy", line, width);
}

std::string memory_lines(const core::CaseResult& r, std::size_t width) {
  const auto calls = metric(r, core::kMemoryCallsMetric);
  if (!calls) return "";
  auto figure = [&](const char* name) {
    auto v = metric(r, name);
    return v ? format_memory(name, *v) : std::string("?");
  };
  std::string out;
  if (auto growth = metric(r, core::kRssGrowthMetric))
    out += labelled("memory",
                    fmt::format("over {:.0f} calls: resident set {}{}; {} minor and {} major page "
                                "faults per call",
                                *calls, *growth >= 0 ? "+" : "", figure(core::kRssGrowthMetric),
                                figure(core::kMinorFaultsMetric), figure(core::kMajorFaultsMetric)),
                    width);
  if (metric(r, core::kReservedPeakMetric))
    out +=
        labelled("memory",
                 fmt::format("CUDA allocator over {:.0f} calls: reserved peak {}, allocated "
                             "peak {} ({}), {} retries, {} segments",
                             *calls, figure(core::kReservedPeakMetric),
                             figure(core::kAllocatedPeakMetric), figure(core::kReservedRatioMetric),
                             figure(core::kAllocRetriesMetric), figure(core::kSegmentsMetric)),
                 width);
  return out;
}

}  // namespace

std::string render_summary(const core::CaseResult& r, std::size_t width) {
  return kernels_line(r, width) + accuracy_line(r, width) + memory_lines(r, width);
}

std::string format_memory(const std::string& metric, double value) {
  const std::string_view m = metric;
  if (m.ends_with("_bytes")) return util::format_bytes(value);
  if (m.ends_with("_per_call")) return fmt::format("{:.2f}", value);
  if (m == core::kReservedRatioMetric) return fmt::format("{:.2f}x", value);
  return fmt::format("{:.0f}", value);
}

}  // namespace attnprof::costmatrix
