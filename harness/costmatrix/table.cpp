// Text tables for the cost matrix and the kernel view (table.h). Column layout follows torch's
// key_averages().table(): fixed-width columns two spaces apart, dashed rules, totals below. Names
// are left-aligned (torch right-aligns them), which reads better with long kernel names.
#include "harness/costmatrix/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace attnprof::costmatrix {
namespace {

constexpr std::size_t kNameWidth = 55;   // torch's max_name_column_width
constexpr std::size_t kShapeWidth = 35;  // torch's max_shapes_column_width
constexpr std::size_t kNumWidth = 12;

std::string truncate(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

struct Column {
  std::string title;
  std::size_t width;
  bool left = false;
};

class TextTable {
 public:
  explicit TextTable(std::vector<Column> cols) : m_cols(std::move(cols)) {}
  void add(std::vector<std::string> cells) { m_rows.push_back(std::move(cells)); }
  std::string str() const {
    std::string rule, out;
    for (const auto& c : m_cols) rule += std::string(c.width, '-') + "  ";
    rule += "\n";
    out += rule;
    std::vector<std::string> titles;
    for (const auto& c : m_cols) titles.push_back(c.title);
    out += line(titles) + rule;
    for (const auto& r : m_rows) out += line(r);
    out += rule;
    return out;
  }

 private:
  std::string line(const std::vector<std::string>& cells) const {
    std::string s;
    for (std::size_t i = 0; i < m_cols.size(); ++i) {
      const auto& c = m_cols[i];
      const std::string cell = truncate(i < cells.size() ? cells[i] : "", c.width);
      s += c.left ? fmt::format("{:<{}}  ", cell, c.width) : fmt::format("{:>{}}  ", cell, c.width);
    }
    return s + "\n";
  }
  std::vector<Column> m_cols;
  std::vector<std::vector<std::string>> m_rows;
};

std::string percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.2f}%", 100 * part / whole) : "0.00%";
}

using Getter = std::function<double(const core::CostRow&)>;

struct SortKey {
  std::vector<std::string_view> names;
  Getter get;  // empty: sort by name
};

const std::vector<SortKey>& sort_keys() {
  static const std::vector<SortKey> keys = {
      {{"cpu_self", "self_cpu_time_total"}, [](const auto& r) { return r.cpu_self_ns; }},
      {{"cpu_total", "cpu_time_total"}, [](const auto& r) { return r.cpu_total_ns; }},
      {{"device_self", "self_cuda_time_total", "self_device_time_total"},
       [](const auto& r) { return r.device_self_ns; }},
      {{"device_total", "cuda_time_total", "device_time_total"},
       [](const auto& r) { return r.device_total_ns; }},
      {{"calls", "count"}, [](const auto& r) { return double(r.calls); }},
      {{"bytes", "self_cpu_memory_usage"}, [](const auto& r) { return double(r.bytes_allocated); }},
      {{"share"}, [](const auto& r) { return r.share; }},
      {{"launches"}, [](const auto& r) { return double(r.launches); }},
      {{"copies"}, [](const auto& r) { return double(r.copies); }},
      {{"name"}, nullptr},
  };
  return keys;
}

const SortKey& find_key(std::string_view name) {
  for (const auto& k : sort_keys())
    for (auto n : k.names)
      if (n == name) return k;
  std::string valid;
  for (const auto& k : sort_keys())
    for (auto n : k.names) valid += (valid.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument(
      fmt::format("unknown sort key \"{}\" (expected one of: {})", name, valid));
}

}  // namespace

std::string format_time_ns(double ns) {
  const double us = ns / 1e3;
  if (std::abs(us) >= 1e6) return fmt::format("{:.3f}s", us / 1e6);
  if (std::abs(us) >= 1e3) return fmt::format("{:.3f}ms", us / 1e3);
  return fmt::format("{:.3f}us", us);
}

std::string format_bytes(double bytes) {
  constexpr double kb = 1024, mb = 1024 * kb, gb = 1024 * mb;
  if (std::abs(bytes) >= gb) return fmt::format("{:.2f} Gb", bytes / gb);
  if (std::abs(bytes) >= mb) return fmt::format("{:.2f} Mb", bytes / mb);
  if (std::abs(bytes) >= kb) return fmt::format("{:.2f} Kb", bytes / kb);
  return fmt::format("{} b", static_cast<long long>(bytes));
}

std::string render_table(const std::vector<core::CostRow>& rows, std::string_view sort_by,
                         int row_limit) {
  const bool device =
      std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.device_total_ns > 0; });
  const bool shapes = std::any_of(rows.begin(), rows.end(), [](const auto& r) {
    return !r.input_shapes.empty() && r.input_shapes != "[]";
  });
  const bool memory = std::any_of(rows.begin(), rows.end(), [](const auto& r) {
    return r.bytes_allocated != 0 || r.bytes_freed != 0;
  });
  const SortKey& key = find_key(sort_by.empty() ? (device ? "device_self" : "cpu_self") : sort_by);

  std::vector<const core::CostRow*> sorted;
  for (const auto& r : rows) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto* a, const auto* b) {
    return key.get ? key.get(*a) > key.get(*b) : a->op < b->op;
  });

  double cpu_self_total = 0, device_self_total = 0;
  std::size_t name_width = 4;
  for (const auto& r : rows) {
    cpu_self_total += r.cpu_self_ns;
    device_self_total += r.device_self_ns;
    name_width = std::max(name_width, std::min(kNameWidth, r.op.size()));
  }

  std::vector<Column> cols = {{"Name", name_width, true}, {"Self CPU %", kNumWidth},
                              {"Self CPU", kNumWidth},    {"CPU total %", kNumWidth},
                              {"CPU total", kNumWidth},   {"CPU time avg", kNumWidth}};
  if (device) {
    cols.insert(cols.end(), {{"Self Device", kNumWidth},
                             {"Self Device %", 13},
                             {"Device total", kNumWidth},
                             {"Device avg", kNumWidth},
                             {"Launches", kNumWidth},
                             {"Copies", kNumWidth}});
  }
  if (memory) cols.insert(cols.end(), {{"Self Mem", kNumWidth}, {"Self Mem Freed", 14}});
  cols.push_back({"# of Calls", kNumWidth});
  if (shapes) cols.push_back({"Input Shapes", kShapeWidth, true});

  TextTable table(cols);
  const std::size_t limit =
      row_limit > 0 ? std::min<std::size_t>(row_limit, sorted.size()) : sorted.size();
  for (std::size_t i = 0; i < limit; ++i) {
    const auto& r = *sorted[i];
    const double calls = std::max(1, r.calls);
    std::vector<std::string> cells = {r.op,
                                      percent(r.cpu_self_ns, cpu_self_total),
                                      format_time_ns(r.cpu_self_ns),
                                      percent(r.cpu_total_ns, cpu_self_total),
                                      format_time_ns(r.cpu_total_ns),
                                      format_time_ns(r.cpu_total_ns / calls)};
    if (device) {
      cells.insert(cells.end(),
                   {format_time_ns(r.device_self_ns), percent(r.device_self_ns, device_self_total),
                    format_time_ns(r.device_total_ns), format_time_ns(r.device_total_ns / calls),
                    std::to_string(r.launches), std::to_string(r.copies)});
    }
    if (memory)
      cells.insert(cells.end(),
                   {format_bytes(double(r.bytes_allocated)), format_bytes(-double(r.bytes_freed))});
    cells.push_back(std::to_string(r.calls));
    if (shapes) cells.push_back(r.input_shapes);
    table.add(std::move(cells));
  }
  std::string out = table.str();
  out += "Self CPU time total: " + format_time_ns(cpu_self_total) + "\n";
  if (device) out += "Self Device time total: " + format_time_ns(device_self_total) + "\n";
  if (limit < sorted.size()) out += fmt::format("({} of {} rows shown)\n", limit, sorted.size());
  return out;
}

std::string render_kernels(const Kernels& k, int row_limit) {
  std::size_t name_width = 6, op_width = 2;
  for (const auto& r : k.rows) {
    name_width = std::max(name_width, std::min(kNameWidth, r.kernel.size()));
    op_width = std::max(op_width, std::min<std::size_t>(40, r.op.size()));
  }
  TextTable table({{"Kernel", name_width, true},
                   {"Op", op_width, true},
                   {"Calls", 8},
                   {"Total", kNumWidth},
                   {"Total %", 9},
                   {"Avg", kNumWidth},
                   {"Min", kNumWidth},
                   {"Max", kNumWidth},
                   {"Grid", 16},
                   {"Block", 14},
                   {"Regs", 6},
                   {"Shared Mem", kNumWidth}});
  const std::size_t limit =
      row_limit > 0 ? std::min<std::size_t>(row_limit, k.rows.size()) : k.rows.size();
  auto dims = [](const std::array<std::int32_t, 3>& d) {
    return fmt::format("[{}, {}, {}]", d[0], d[1], d[2]);
  };
  for (std::size_t i = 0; i < limit; ++i) {
    const auto& r = k.rows[i];
    table.add({r.kernel, r.op, std::to_string(r.calls), format_time_ns(r.total_ns),
               percent(r.total_ns, k.total_ns), format_time_ns(r.avg_ns()),
               format_time_ns(r.min_ns), format_time_ns(r.max_ns), dims(r.grid), dims(r.block),
               std::to_string(r.registers_per_thread), format_bytes(r.shared_bytes)});
  }
  std::string out = table.str();
  out += "Kernel time total: " + format_time_ns(k.total_ns) + "\n";
  if (limit < k.rows.size()) out += fmt::format("({} of {} rows shown)\n", limit, k.rows.size());
  return out;
}

}  // namespace attnprof::costmatrix
