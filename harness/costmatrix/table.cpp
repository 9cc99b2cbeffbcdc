// Text tables for the cost matrix and the kernel view (table.h). Column layout follows torch's
// key_averages().table(): fixed-width columns two spaces apart, dashed rules, totals below. Names
// are left-aligned (torch right-aligns them), which reads better with long kernel names.
#include "harness/costmatrix/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "harness/util/format.h"

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
  // When the table is wider than asked: columns of rank 1 are left out first, then 2, ...;
  // rank 0 always stays.
  int drop_rank = 0;
};

class TextTable {
 public:
  explicit TextTable(std::vector<Column> cols) : m_cols(std::move(cols)) {}
  void add(std::vector<std::string> cells) { m_rows.push_back(std::move(cells)); }
  // Within `width` columns (0: all columns), by util::columns_that_fit: every line ends in the
  // two spaces torch's does, so they count.
  std::string str(std::size_t width) const {
    std::vector<Column> cols = m_cols;
    std::vector<std::size_t> widths, order;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      // Fitting a width, a column is as wide as its title and cells need (torch's widths are
      // roomier); --wide keeps torch's layout.
      if (width > 0) {
        std::size_t need = cols[i].title.size();
        for (const auto& r : m_rows) need = std::max(need, i < r.size() ? r[i].size() : 0);
        cols[i].width = std::min(cols[i].width, need);
      }
      widths.push_back(cols[i].width);
      if (cols[i].drop_rank > 0) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](auto a, auto b) { return cols[a].drop_rank < cols[b].drop_rank; });
    const std::vector<bool> kept =
        util::columns_that_fit(widths, order, 2, width > 2 ? width - 2 : width);
    std::string rule, out;
    std::vector<std::string> titles, left_out;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      if (kept[i]) rule += std::string(cols[i].width, '-') + "  ";
      if (!kept[i]) left_out.push_back(cols[i].title);
      titles.push_back(cols[i].title);
    }
    rule += "\n";
    out += rule;
    out += line(cols, titles, kept) + rule;
    for (const auto& r : m_rows) out += line(cols, r, kept);
    out += rule;
    return out + util::left_out_note(left_out, width);
  }

 private:
  static std::string line(const std::vector<Column>& cols, const std::vector<std::string>& cells,
                          const std::vector<bool>& kept) {
    std::string s;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      if (!kept[i]) continue;
      const auto& c = cols[i];
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

std::string render_table(const std::vector<core::CostRow>& rows, std::string_view sort_by,
                         int row_limit, std::size_t width) {
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

  // Drop ranks: what a narrow terminal loses first. The self time of the device that ran the
  // op, and the name, always stay; with device time the CPU's columns go before the device's.
  std::vector<Column> cols = {{"Name", name_width, true, 0},
                              {"Self CPU %", kNumWidth, false, device ? 5 : 7},
                              {"Self CPU", kNumWidth, false, device ? 6 : 0},
                              {"CPU total %", kNumWidth, false, 1},
                              {"CPU total", kNumWidth, false, device ? 5 : 8},
                              {"CPU time avg", kNumWidth, false, 5}};
  if (device) {
    cols.insert(cols.end(), {{"Self Device", kNumWidth, false, 0},
                             {"Self Device %", 13, false, 7},
                             {"Device total", kNumWidth, false, 8},
                             {"Device avg", kNumWidth, false, 5},
                             {"Launches", kNumWidth, false, 4},
                             {"Copies", kNumWidth, false, 3}});
  }
  if (memory)
    cols.insert(cols.end(), {{"Self Mem", kNumWidth, false, 9}, {"Self Mem Freed", 14, false, 2}});
  cols.push_back({"# of Calls", kNumWidth, false, 11});
  if (shapes) cols.push_back({"Input Shapes", kShapeWidth, true, 6});

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
      cells.insert(cells.end(), {util::format_bytes(double(r.bytes_allocated)),
                                 util::format_bytes(-double(r.bytes_freed))});
    cells.push_back(std::to_string(r.calls));
    if (shapes) cells.push_back(r.input_shapes);
    table.add(std::move(cells));
  }
  std::string out = table.str(width);
  out += "Self CPU time total: " + format_time_ns(cpu_self_total) + "\n";
  if (device) out += "Self Device time total: " + format_time_ns(device_self_total) + "\n";
  if (limit < sorted.size()) out += fmt::format("({} of {} rows shown)\n", limit, sorted.size());
  return out;
}

std::string render_kernels(const Kernels& k, int row_limit, std::size_t width) {
  std::size_t name_width = 6, op_width = 2;
  for (const auto& r : k.rows) {
    name_width = std::max(name_width, std::min(kNameWidth, r.kernel.size()));
    op_width = std::max(op_width, std::min<std::size_t>(40, r.op.size()));
  }
  TextTable table({{"Kernel", name_width, true, 0},
                   {"Op", op_width, true, 8},
                   {"Calls", 8, false, 9},
                   {"Total", kNumWidth, false, 0},
                   {"Total %", 9, false, 7},
                   {"Avg", kNumWidth, false, 6},
                   {"Min", kNumWidth, false, 2},
                   {"Max", kNumWidth, false, 2},
                   {"Grid", 16, false, 5},
                   {"Block", 14, false, 5},
                   {"Regs", 6, false, 3},
                   {"Shared Mem", kNumWidth, false, 4}});
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
               std::to_string(r.registers_per_thread), util::format_bytes(r.shared_bytes)});
  }
  std::string out = table.str(width);
  out += "Kernel time total: " + format_time_ns(k.total_ns) + "\n";
  if (limit < k.rows.size()) out += fmt::format("({} of {} rows shown)\n", limit, k.rows.size());
  return out;
}

}  // namespace attnprof::costmatrix
