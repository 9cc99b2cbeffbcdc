// Splitting a suite across CI jobs (--shard i/n) and the cost model that balances the split.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "harness/kernel/flops.h"
#include "harness/scenario/scenario.h"
#include "harness/scenario/values.h"
#include "harness/util/error.h"

namespace attnprof::scenario {

double case_flops(const core::Case& c) {
  const auto& g = c.model;
  double flops = kernel::attention_flops(c);  // the one FLOP definition
  const double tokens = static_cast<double>(c.batch) * c.q_len;
  if (c.level != core::Level::kernel) {
    flops += 2 * tokens * g.hidden * (g.heads + 2.0 * g.kv_heads) * g.head_dim;  // QKV
    flops += 2 * tokens * g.heads * g.head_dim * g.hidden;                       // output
  }
  if (c.level == core::Level::layer) {
    const double mats = g.norm == "rmsnorm" ? 3 : 2;  // gated (SwiGLU) MLPs have three
    flops += 2 * tokens * g.hidden * g.mlp_hidden * mats;
  }
  return flops;
}

double expected_cost(const core::Case& c) {
  const bool gpu = c.hardware.device != "cpu";
  const bool half = c.dtype != core::DType::fp32;
  // Nominal rates: only their ratios matter for balancing, but plausible absolute values make
  // the figure readable as seconds.
  const double rate = gpu ? (half ? 300e12 : 40e12) : (half ? 20e9 : 50e9);
  const double bandwidth = gpu ? 2e12 : 20e9;
  const double overhead = gpu ? 10e-6 : 20e-6;
  const auto& g = c.model;
  const double elems = static_cast<double>(c.batch) * g.head_dim *
                       (2.0 * g.heads * c.q_len + 2.0 * g.kv_heads * c.kv_len);
  const double t =
      std::max(case_flops(c) / rate, elems * core::bytes_per_element(c.dtype) / bandwidth) +
      overhead;
  // Warm-up, the correctness check, then sampling: typically a few times min_samples calls
  // before the median's interval is narrow enough, never past the budget.
  const double sampling = std::min(c.measure.time_budget_s, 4.0 * c.measure.min_samples * t);
  return c.measure.warmup_ms / 1e3 + 2 * t + sampling;
}

std::pair<int, int> parse_shard(std::string_view s) {
  auto bad = [&](std::string msg) {
    return util::InputError(util::Diagnostic{"--shard", 0, 0, std::move(msg)});
  };
  auto slash = s.find('/');
  auto i = slash == std::string_view::npos ? std::nullopt : parse_int(s.substr(0, slash));
  auto n = slash == std::string_view::npos ? std::nullopt : parse_int(s.substr(slash + 1));
  if (!i || !n) throw bad(fmt::format("expected INDEX/COUNT such as 2/4, got \"{}\"", s));
  if (*n < 1 || *n > 100000)
    throw bad(fmt::format("shard count must be between 1 and 100000, got {}", *n));
  if (*i < 1 || *i > *n)
    throw bad(fmt::format("shard index must be between 1 and {}, got {}", *n, *i));
  return {static_cast<int>(*i), static_cast<int>(*n)};
}

std::vector<core::Case> shard(const std::vector<core::Case>& cases, int index, int count) {
  if (count < 1 || index < 1 || index > count)
    throw util::InputError(util::Diagnostic{
        "--shard", 0, 0,
        fmt::format("shard {}/{}: index must be between 1 and count", index, count)});
  // Longest-processing-time first: costliest cases first, each to the least loaded shard.
  // Costs are rounded to microseconds and ties broken by key, so the split depends only on the
  // cases themselves: not their order, and not floating-point noise across machines.
  std::vector<std::size_t> order(cases.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<long long> cost(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i)
    cost[i] = std::llround(expected_cost(cases[i]) * 1e6);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (cost[a] != cost[b]) return cost[a] > cost[b];
    if (cases[a].key != cases[b].key) return cases[a].key < cases[b].key;
    return a < b;
  });
  std::vector<long long> load(count, 0);
  std::vector<int> owner(cases.size());
  for (std::size_t i : order) {
    int best = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    owner[i] = best;
    load[best] += cost[i];
  }
  std::vector<core::Case> out;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (owner[i] == index - 1) out.push_back(cases[i]);
  return out;
}

}  // namespace attnprof::scenario
