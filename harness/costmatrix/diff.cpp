#include "harness/costmatrix/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "harness/util/format.h"

namespace attnprof::costmatrix {
namespace {

// Device time where the matrix has any (a GPU case), else CPU time: the same rule that ranks
// the matrix itself.
bool has_device(const std::vector<core::CostRow>& rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [](const core::CostRow& r) { return r.device_self_ns > 0; });
}

struct Side {
  double self = 0, total = 0;
  int calls = 0;
  std::int64_t bytes = 0;
};

using OpKey = std::tuple<std::string, std::string, std::string>;  // op, shapes, parent

void collect(const std::vector<core::CostRow>& rows, bool device, std::map<OpKey, Side>& ops,
             std::map<std::string, Side>& kernels) {
  for (const auto& r : rows) {
    Side& s = ops[{r.op, r.input_shapes, r.parent}];
    s.self += device ? r.device_self_ns : r.cpu_self_ns;
    s.total += device ? r.device_total_ns : r.cpu_total_ns;
    s.calls += r.calls;
    s.bytes += r.bytes_allocated;
    for (std::size_t i = 0; i < r.kernels.size(); ++i) {
      Side& k = kernels[r.kernels[i].first];
      const double ns = i < r.kernel_ns.size() ? r.kernel_ns[i] : 0;
      k.self += ns;
      k.total += ns;
      k.calls += r.kernels[i].second;
    }
  }
}

std::string short_text(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

std::string change(const DiffRow& r) {
  if (r.base_self_ns <= 0) return "new";
  if (r.head_self_ns <= 0) return "gone";
  return fmt::format("{:+.1f}%", (r.head_self_ns / r.base_self_ns - 1) * 100);
}

}  // namespace

std::vector<DiffRow> diff(const std::vector<core::CostRow>& base,
                          const std::vector<core::CostRow>& head) {
  const bool device = has_device(base) || has_device(head);
  std::map<OpKey, Side> base_ops, head_ops;
  std::map<std::string, Side> base_k, head_k;
  collect(base, device, base_ops, base_k);
  collect(head, device, head_ops, head_k);

  std::vector<DiffRow> out;
  auto add = [&](const std::string& what, bool kernel, const Side& b, const Side& h) {
    if (b.self == h.self && b.total == h.total && b.calls == h.calls && b.bytes == h.bytes) return;
    out.push_back({what, kernel, b.self, h.self, b.total, h.total, b.calls, h.calls, b.bytes,
                   h.bytes});
  };
  std::map<OpKey, std::pair<Side, Side>> ops;
  for (const auto& [k, s] : base_ops) ops[k].first = s;
  for (const auto& [k, s] : head_ops) ops[k].second = s;
  for (const auto& [k, s] : ops) {
    const auto& [op, shapes, parent] = k;
    std::string what = op;
    if (!shapes.empty() && shapes != "[]") what += " " + shapes;
    if (!parent.empty()) what += " in " + parent;
    add(what, false, s.first, s.second);
  }
  std::map<std::string, std::pair<Side, Side>> ks;
  for (const auto& [k, s] : base_k) ks[k].first = s;
  for (const auto& [k, s] : head_k) ks[k].second = s;
  for (const auto& [k, s] : ks) add("kernel " + k, true, s.first, s.second);

  std::stable_sort(out.begin(), out.end(), [](const DiffRow& a, const DiffRow& b) {
    return std::abs(a.delta_ns()) > std::abs(b.delta_ns());
  });
  return out;
}

std::string render_diff(const std::vector<DiffRow>& rows, int max_rows) {
  if (rows.empty() || max_rows <= 0) return "";
  std::string out = fmt::format("  {:<56} {:>10} {:>10} {:>9} {:>11} {:>11}\n", "op (self time)",
                                "base", "head", "change", "calls b/h", "total b/h");
  const int n = std::min<int>(max_rows, static_cast<int>(rows.size()));
  for (int i = 0; i < n; ++i) {
    const auto& r = rows[i];
    out += fmt::format("  {:<56} {:>10} {:>10} {:>9} {:>11} {:>11}\n", short_text(r.what, 56),
                       util::format_duration(r.base_self_ns), util::format_duration(r.head_self_ns),
                       change(r), fmt::format("{}/{}", r.base_calls, r.head_calls),
                       fmt::format("{}/{}", util::format_duration(r.base_total_ns),
                                   util::format_duration(r.head_total_ns)));
  }
  return out;
}

std::string render_diff_markdown(const std::vector<DiffRow>& rows, int max_rows) {
  if (rows.empty() || max_rows <= 0) return "";
  std::string out =
      "| op (self time) | base | head | change | calls base/head | total base/head | bytes "
      "base/head |\n|---|---:|---:|---:|---:|---:|---:|\n";
  const int n = std::min<int>(max_rows, static_cast<int>(rows.size()));
  for (int i = 0; i < n; ++i) {
    const auto& r = rows[i];
    std::string what = short_text(r.what, 100);
    std::replace(what.begin(), what.end(), '|', '/');
    out += fmt::format("| `{}` | {} | {} | {} | {}/{} | {}/{} | {}/{} |\n", what,
                       util::format_duration(r.base_self_ns), util::format_duration(r.head_self_ns),
                       change(r), r.base_calls, r.head_calls,
                       util::format_duration(r.base_total_ns),
                       util::format_duration(r.head_total_ns), r.base_bytes, r.head_bytes);
  }
  return out;
}

}  // namespace attnprof::costmatrix
