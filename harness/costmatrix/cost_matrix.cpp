// Aggregation of a Trace into cost-matrix rows and the kernel view (cost_matrix.h).
#include "harness/costmatrix/cost_matrix.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace attnprof::costmatrix {
namespace {

double duration(std::uint64_t start, std::uint64_t end) {
  return end > start ? static_cast<double>(end - start) : 0.0;
}

// An op's own time: its window less what the tracer spent inside it.
double op_ns(const trace::OpEvent& op) {
  return std::max(0.0, duration(op.start_ns, op.end_ns) - static_cast<double>(op.tracer_ns));
}

// Sums over a pass of several calls become per-call figures; a count rounds to the nearest
// whole number but never hides an op that ran (at least 1).
int per_call(int count, int calls) {
  if (calls <= 1 || count == 0) return count;
  return std::max(1, static_cast<int>(std::lround(double(count) / calls)));
}

// For each op, and each device record, whether it belongs to a kept call; and how many were kept.
struct Kept {
  std::vector<bool> op;
  int calls = 1;
  bool device(const trace::Trace& t, const trace::DeviceEvent& d) const;
  std::vector<bool> call;  // per call
};

bool Kept::device(const trace::Trace& t, const trace::DeviceEvent& d) const {
  if (d.op >= 0 && static_cast<std::size_t>(d.op) < op.size()) return op[d.op];
  return call.empty() || call[trace::call_of(t, d.start_ns)];
}

Kept kept(const trace::Trace& t) {
  Kept k;
  k.call = kept_calls(t);
  k.op.assign(t.ops.size(), true);
  if (k.call.empty()) {
    k.calls = std::max(1, t.calls);
    return k;
  }
  k.calls = static_cast<int>(std::count(k.call.begin(), k.call.end(), true));
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    k.op[i] = k.call[trace::call_of(t, t.ops[i].start_ns)];
  return k;
}

struct RowAcc {
  core::CostRow row;
  std::map<std::string, std::pair<int, double>> kernels;  // name -> launches, ns
};

// A row's identity: op name, input shapes, enclosing op's name.
using RowKey = std::tuple<std::string, std::string, std::string>;
using RowAccs = std::map<RowKey, RowAcc>;

bool has_op(const trace::Trace& t, std::int64_t op) {
  return op >= 0 && static_cast<std::size_t>(op) < t.ops.size();
}

std::string parent_name(const trace::Trace& t, const trace::OpEvent& op) {
  return has_op(t, op.parent) ? t.ops[op.parent].name : std::string();
}

RowKey key_of(const trace::Trace& t, const trace::OpEvent& op) {
  return {op.name, op.input_shapes, parent_name(t, op)};
}

// Per op, over the kept calls: the CPU time of its children and the device time it launched
// itself (self) and with its descendants (total); and the device time no op claimed.
struct OpTimes {
  std::vector<double> children_cpu, device_self, device_total;
  double unclaimed_device = 0;
};

OpTimes op_times(const trace::Trace& t, const Kept& keep) {
  const std::size_t n = t.ops.size();
  OpTimes o;
  o.children_cpu.assign(n, 0.0);
  o.device_self.assign(n, 0.0);
  o.device_total.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& op = t.ops[i];
    if (has_op(t, op.parent)) o.children_cpu[op.parent] += op_ns(op);
  }
  for (const auto& d : t.device) {
    if (!keep.device(t, d)) continue;
    const double ns = duration(d.start_ns, d.end_ns);
    if (!has_op(t, d.op)) {
      o.unclaimed_device += ns;
      continue;
    }
    o.device_self[d.op] += ns;
    // Every ancestor's inclusive device time includes it. The walk is bounded by n so a
    // malformed parent chain cannot loop forever.
    std::int64_t a = d.op;
    for (std::size_t steps = 0; has_op(t, a) && steps <= n; ++steps) {
      o.device_total[a] += ns;
      a = t.ops[a].parent;
    }
  }
  return o;
}

// The kept ops' calls and times, summed into their rows.
void add_ops(const trace::Trace& t, const Kept& keep, const OpTimes& times, RowAccs& acc) {
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    if (!keep.op[i]) continue;
    const auto& op = t.ops[i];
    auto& r = acc[key_of(t, op)].row;
    if (r.calls == 0) {
      r.op = op.name;
      r.input_shapes = op.input_shapes;
      r.input_dtypes = op.input_dtypes;
      r.parent = parent_name(t, op);
    }
    ++r.calls;
    const double total = op_ns(op);
    r.cpu_total_ns += total;
    r.cpu_self_ns += std::max(0.0, total - times.children_cpu[i]);
    r.device_self_ns += times.device_self[i];
    r.device_total_ns += times.device_total[i];
    r.bytes_allocated += op.bytes_allocated;
    r.bytes_freed += op.bytes_freed;
  }
}

// The kept device records' launches, copies and kernels, into the rows of the ops that launched
// them; those no op claimed into the kNoOp row, which also gets their time.
void add_device(const trace::Trace& t, const Kept& keep, double unclaimed_device, RowAccs& acc) {
  for (const auto& d : t.device) {
    if (!keep.device(t, d)) continue;
    const bool claimed = has_op(t, d.op);
    auto& a = claimed ? acc[key_of(t, t.ops[d.op])] : acc[{std::string(kNoOp), "", ""}];
    if (!claimed && a.row.op.empty()) a.row.op = std::string(kNoOp);
    if (d.kind == trace::DeviceKind::kernel)
      ++a.row.launches;
    else
      ++a.row.copies;
    auto& k = a.kernels[d.name];
    ++k.first;
    k.second += duration(d.start_ns, d.end_ns);
  }
  if (unclaimed_device > 0) {
    auto& r = acc[{std::string(kNoOp), "", ""}].row;
    r.device_self_ns = r.device_total_ns = unclaimed_device;
  }
}

// A row's sums over `calls` calls as per-call figures, its kernels listed most time first.
core::CostRow per_call_row(RowAcc& a, int calls) {
  std::vector<std::tuple<std::string, int, double>> ks;
  for (auto& [name, cn] : a.kernels) ks.emplace_back(name, cn.first, cn.second);
  std::stable_sort(ks.begin(), ks.end(),
                   [](const auto& x, const auto& y) { return std::get<2>(x) > std::get<2>(y); });
  for (auto& [name, launched, ns] : ks) {
    a.row.kernels.emplace_back(name, per_call(launched, calls));
    a.row.kernel_ns.push_back(ns / calls);
  }
  auto& r = a.row;
  r.calls = per_call(r.calls, calls);
  r.launches = per_call(r.launches, calls);
  r.copies = per_call(r.copies, calls);
  for (double* ns : {&r.cpu_self_ns, &r.cpu_total_ns, &r.device_self_ns, &r.device_total_ns})
    *ns /= calls;
  r.bytes_allocated /= calls;
  r.bytes_freed /= calls;
  return std::move(a.row);
}

}  // namespace

std::vector<double> call_walls(const trace::Trace& t) {
  const std::size_t n = t.call_starts.size();
  std::vector<double> wall(n);
  for (std::size_t i = 0; i < n; ++i)
    wall[i] = duration(t.call_starts[i], i + 1 < n ? t.call_starts[i + 1] : t.end_ns);
  return wall;
}

double median_call_ns(const trace::Trace& t) {
  return median_call_ns(call_walls(t));
}

double median_call_ns(std::vector<double> walls) {
  if (walls.empty()) return 0;
  std::sort(walls.begin(), walls.end());
  // The lower median: with two calls, the faster one sets the bar.
  return walls[(walls.size() - 1) / 2];
}

bool same_state(double pass_median_call_ns, double measured_median_ns) {
  if (pass_median_call_ns <= 0 || measured_median_ns <= 0) return true;  // nothing to judge by
  const double ratio = pass_median_call_ns / measured_median_ns;
  return ratio <= kStateFactor && ratio >= 1 / kStateFactor;
}

std::vector<bool> kept_calls(const trace::Trace& t) {
  const std::vector<double> wall = call_walls(t);
  const std::size_t n = wall.size();
  if (n == 0) return {};
  const double median = median_call_ns(t);
  std::vector<bool> keep(n);
  for (std::size_t i = 0; i < n; ++i)
    keep[i] = wall[i] <= kOutlierCallFactor * median && wall[i] * kOutlierCallFactor >= median;
  return keep;
}

std::vector<core::CostRow> build(const trace::Trace& t) {
  const Kept keep = kept(t);
  const OpTimes times = op_times(t, keep);
  RowAccs acc;
  add_ops(t, keep, times, acc);
  add_device(t, keep, times.unclaimed_device, acc);

  const bool on_device = !t.device.empty();
  const int calls = std::max(1, keep.calls);
  std::vector<core::CostRow> rows;
  rows.reserve(acc.size());
  double total_self = 0;
  for (auto& [key, a] : acc) {
    rows.push_back(per_call_row(a, calls));
    total_self += on_device ? rows.back().device_self_ns : rows.back().cpu_self_ns;
  }
  for (auto& r : rows)
    r.share = total_self > 0 ? (on_device ? r.device_self_ns : r.cpu_self_ns) / total_self : 0;
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& x, const auto& y) {
    if (on_device && x.device_self_ns != y.device_self_ns)
      return x.device_self_ns > y.device_self_ns;
    return x.cpu_self_ns > y.cpu_self_ns;
  });
  return rows;
}

Kernels kernels(const trace::Trace& t) {
  using Key = std::tuple<std::string, std::string, std::array<std::int32_t, 3>,
                         std::array<std::int32_t, 3>>;
  std::map<Key, KernelRow> acc;
  Kernels out;
  const Kept keep = kept(t);
  for (const auto& d : t.device) {
    if (d.kind != trace::DeviceKind::kernel || !keep.device(t, d)) continue;
    const bool claimed = d.op >= 0 && static_cast<std::size_t>(d.op) < t.ops.size();
    const std::string op = claimed ? t.ops[d.op].name : std::string(kNoOp);
    auto& r = acc[{d.name, op, d.grid, d.block}];
    const double ns = duration(d.start_ns, d.end_ns);
    if (r.calls == 0) {
      r.kernel = d.name;
      r.op = op;
      r.grid = d.grid;
      r.block = d.block;
      r.registers_per_thread = d.registers_per_thread;
      r.shared_bytes = d.static_shared_bytes + d.dynamic_shared_bytes;
      r.min_ns = r.max_ns = ns;
    }
    ++r.calls;
    r.total_ns += ns;
    r.min_ns = std::min(r.min_ns, ns);
    r.max_ns = std::max(r.max_ns, ns);
    out.total_ns += ns;
  }
  // Per call of the body, like build(); min and max stay those of single launches.
  const int calls = std::max(1, keep.calls);
  out.total_ns /= calls;
  for (auto& [key, r] : acc) {
    r.calls = per_call(r.calls, calls);
    r.total_ns /= calls;
    out.rows.push_back(std::move(r));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [](const auto& x, const auto& y) { return x.total_ns > y.total_ns; });
  return out;
}

double device_busy_ns(const trace::Trace& t) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> iv;
  iv.reserve(t.device.size());
  for (const auto& d : t.device)
    if (d.end_ns > d.start_ns) iv.emplace_back(d.start_ns, d.end_ns);
  std::sort(iv.begin(), iv.end());
  double busy = 0;
  std::uint64_t cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [s, e] : iv) {
    if (open && s <= cur_end) {
      cur_end = std::max(cur_end, e);
      continue;
    }
    if (open) busy += static_cast<double>(cur_end - cur_start);
    cur_start = s;
    cur_end = e;
    open = true;
  }
  if (open) busy += static_cast<double>(cur_end - cur_start);
  return busy;
}

double wall_ns(const trace::Trace& t) {
  std::uint64_t end = t.end_ns;
  for (const auto& d : t.device) end = std::max(end, d.end_ns);
  return duration(t.start_ns, end);
}

double share_of(const trace::Trace& t, std::string_view op) {
  return share_of(t, [op](std::string_view name) { return name == op; });
}

bool is_attention_op(std::string_view name) {
  for (std::string_view part : {"scaled_dot_product", "flash_attention", "efficient_attention",
                                "flex_attention", "cudnn_attention"})
    if (name.find(part) != std::string_view::npos) return true;
  return false;
}

double share_of(const trace::Trace& t, const std::function<bool(std::string_view)>& is_part) {
  const std::size_t n = t.ops.size();
  const bool on_device = !t.device.empty();
  // Inclusive time per op: CPU from the op's window, device from the kernels under it.
  std::vector<double> incl(n, 0.0);
  if (on_device) {
    for (const auto& d : t.device) {
      std::int64_t a = d.op;
      for (std::size_t steps = 0; a >= 0 && static_cast<std::size_t>(a) < n && steps <= n;
           ++steps) {
        incl[a] += duration(d.start_ns, d.end_ns);
        a = t.ops[a].parent;
      }
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) incl[i] = op_ns(t.ops[i]);
  }
  auto has_ancestor_named = [&](std::size_t i) {
    std::int64_t a = t.ops[i].parent;
    for (std::size_t steps = 0; a >= 0 && static_cast<std::size_t>(a) < n && steps <= n; ++steps) {
      if (is_part(t.ops[a].name)) return true;
      a = t.ops[a].parent;
    }
    return false;
  };
  double part = 0, whole = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (t.ops[i].parent < 0) whole += incl[i];
    if (is_part(t.ops[i].name) && !has_ancestor_named(i)) part += incl[i];
  }
  if (on_device) {
    // Device activity outside any op still belongs to the case.
    for (const auto& d : t.device)
      if (d.op < 0) whole += duration(d.start_ns, d.end_ns);
  }
  return whole > 0 ? part / whole : 0;
}

std::optional<std::vector<std::string>> kernel_set(const std::vector<core::CostRow>& rows,
                                                   bool device) {
  // How deep each op is nested (0: top level), through the rows' parents; an op under several
  // parents counts at its shallowest. Relaxed until nothing changes: at most one pass per row.
  std::map<std::string, std::size_t> depth;
  for (const auto& r : rows)
    if (r.parent.empty()) depth[r.op] = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& r : rows) {
      auto p = r.parent.empty() ? depth.end() : depth.find(r.parent);
      if (p == depth.end()) continue;
      const std::size_t d = p->second + 1;
      auto [it, fresh] = depth.try_emplace(r.op, d);
      if (fresh || d < it->second) {
        it->second = d;
        changed = true;
      }
    }
  }
  std::map<std::string, std::size_t> names;  // name -> the depth it is listed at
  auto add = [&](const std::string& name, const std::string& op) {
    auto d = depth.find(op);
    const std::size_t at = d == depth.end() ? rows.size() : d->second;
    auto [it, fresh] = names.try_emplace(name, at);
    if (!fresh) it->second = std::min(it->second, at);
  };
  for (const auto& r : rows) {
    if (!device && r.op != kNoOp) add(r.op, r.op);
    if (device)
      for (const auto& [kernel, launches] : r.kernels) add(kernel, r.op);
  }
  if (device && names.empty()) return std::nullopt;
  std::vector<std::pair<std::size_t, std::string>> order;
  for (const auto& [name, at] : names) order.emplace_back(at, name);
  std::sort(order.begin(), order.end());
  std::vector<std::string> out;
  for (auto& [at, name] : order) out.push_back(std::move(name));
  return out;
}

}  // namespace attnprof::costmatrix
