#include "harness/store/serialize.h"

#include <fmt/format.h>

#include "harness/util/error.h"

namespace attnprof::store {

using nlohmann::json;

namespace {

template <class E, class Parse>
E parse_enum(const json& j, const char* key, E def, Parse parse) {
  if (!j.contains(key)) return def;
  auto s = j.at(key).get<std::string>();
  if (auto v = parse(s)) return *v;
  throw util::InputError(
      util::Diagnostic{"run JSON", 0, 0, fmt::format("unknown {} \"{}\"", key, s)});
}

std::optional<core::Phase> parse_phase(std::string_view s) {
  for (auto p : {core::Phase::prefill, core::Phase::decode})
    if (s == core::to_string(p)) return p;
  return std::nullopt;
}

std::optional<core::Level> parse_level(std::string_view s) {
  for (auto l : {core::Level::kernel, core::Level::block, core::Level::layer})
    if (s == core::to_string(l)) return l;
  return std::nullopt;
}

template <class T>
void get_opt(const json& j, const char* key, std::optional<T>& out) {
  if (j.contains(key) && !j.at(key).is_null()) out = j.at(key).get<T>();
}

template <class T>
void get(const json& j, const char* key, T& out) {
  if (j.contains(key)) out = j.at(key).get<T>();
}

}  // namespace

json to_json(const core::Case& c) {
  json g = {{"name", c.model.name},
            {"heads", c.model.heads},
            {"kv_heads", c.model.kv_heads},
            {"head_dim", c.model.head_dim},
            {"hidden", c.model.hidden},
            {"max_positions", c.model.max_positions},
            {"sliding_window", c.model.sliding_window},
            {"mlp_hidden", c.model.mlp_hidden},
            {"norm", c.model.norm}};
  json hw = {{"device", c.hardware.device},
             {"gpu_pattern", c.hardware.gpu_pattern},
             {"threads", c.hardware.threads},
             {"clock_policy", c.hardware.clock_policy}};
  if (c.hardware.peak_gbps) hw["peak_gbps"] = *c.hardware.peak_gbps;
  if (c.hardware.peak_tflops) hw["peak_tflops"] = *c.hardware.peak_tflops;
  json m = {{"warmup_ms", c.measure.warmup_ms},         {"min_samples", c.measure.min_samples},
            {"max_samples", c.measure.max_samples},     {"target_rel_ci", c.measure.target_rel_ci},
            {"time_budget_s", c.measure.time_budget_s}, {"trace", c.measure.trace}};
  json j = {{"key", c.key},
            {"aliases", c.aliases},
            {"suite", c.suite},
            {"workload", c.workload},
            {"kernel", c.kernel},
            {"model", g},
            {"phase", core::to_string(c.phase)},
            {"level", core::to_string(c.level)},
            {"batch", c.batch},
            {"q_len", c.q_len},
            {"kv_len", c.kv_len},
            {"seq_lens", c.seq_lens},
            {"dtype", core::to_string(c.dtype)},
            {"mask", core::to_string(c.mask)},
            {"window", c.window},
            {"seed", c.seed},
            {"hardware", hw},
            {"measure", m},
            {"gate", {{"tolerance", c.gate.tolerance}}},
            {"loc", {{"file", c.loc.file}, {"line", c.loc.line}, {"col", c.loc.col}}}};
  if (c.scale) j["scale"] = *c.scale;
  return j;
}

core::Case case_from_json(const json& j) {
  core::Case c;
  get(j, "key", c.key);
  get(j, "aliases", c.aliases);
  get(j, "suite", c.suite);
  get(j, "workload", c.workload);
  get(j, "kernel", c.kernel);
  if (j.contains("model")) {
    const json& g = j.at("model");
    get(g, "name", c.model.name);
    get(g, "heads", c.model.heads);
    get(g, "kv_heads", c.model.kv_heads);
    get(g, "head_dim", c.model.head_dim);
    get(g, "hidden", c.model.hidden);
    get(g, "max_positions", c.model.max_positions);
    get(g, "sliding_window", c.model.sliding_window);
    get(g, "mlp_hidden", c.model.mlp_hidden);
    get(g, "norm", c.model.norm);
  }
  c.phase = parse_enum(j, "phase", c.phase, parse_phase);
  c.level = parse_enum(j, "level", c.level, parse_level);
  get(j, "batch", c.batch);
  get(j, "q_len", c.q_len);
  get(j, "kv_len", c.kv_len);
  get(j, "seq_lens", c.seq_lens);
  c.dtype = parse_enum(j, "dtype", c.dtype, core::parse_dtype);
  c.mask = parse_enum(j, "mask", c.mask, core::parse_mask);
  get(j, "window", c.window);
  get_opt(j, "scale", c.scale);
  get(j, "seed", c.seed);
  if (j.contains("hardware")) {
    const json& h = j.at("hardware");
    get(h, "device", c.hardware.device);
    get(h, "gpu_pattern", c.hardware.gpu_pattern);
    get(h, "threads", c.hardware.threads);
    get(h, "clock_policy", c.hardware.clock_policy);
    get_opt(h, "peak_gbps", c.hardware.peak_gbps);
    get_opt(h, "peak_tflops", c.hardware.peak_tflops);
  }
  if (j.contains("measure")) {
    const json& m = j.at("measure");
    get(m, "warmup_ms", c.measure.warmup_ms);
    get(m, "min_samples", c.measure.min_samples);
    get(m, "max_samples", c.measure.max_samples);
    get(m, "target_rel_ci", c.measure.target_rel_ci);
    get(m, "time_budget_s", c.measure.time_budget_s);
    get(m, "trace", c.measure.trace);
  }
  if (j.contains("gate")) get(j.at("gate"), "tolerance", c.gate.tolerance);
  if (j.contains("loc")) {
    const json& l = j.at("loc");
    get(l, "file", c.loc.file);
    get(l, "line", c.loc.line);
    get(l, "col", c.loc.col);
  }
  return c;
}

json to_json(const core::CostRow& r) {
  json k = json::array();
  for (const auto& [name, launches] : r.kernels) k.push_back({name, launches});
  return {{"op", r.op},
          {"input_shapes", r.input_shapes},
          {"parent", r.parent},
          {"calls", r.calls},
          {"cpu_self_ns", r.cpu_self_ns},
          {"cpu_total_ns", r.cpu_total_ns},
          {"device_self_ns", r.device_self_ns},
          {"device_total_ns", r.device_total_ns},
          {"share", r.share},
          {"bytes_allocated", r.bytes_allocated},
          {"kernels", k},
          {"input_dtypes", r.input_dtypes},
          {"bytes_freed", r.bytes_freed},
          {"launches", r.launches},
          {"kernel_ns", r.kernel_ns}};
}

core::CostRow cost_row_from_json(const json& j) {
  core::CostRow r;
  get(j, "op", r.op);
  get(j, "input_shapes", r.input_shapes);
  get(j, "parent", r.parent);
  get(j, "calls", r.calls);
  get(j, "cpu_self_ns", r.cpu_self_ns);
  get(j, "cpu_total_ns", r.cpu_total_ns);
  get(j, "device_self_ns", r.device_self_ns);
  get(j, "device_total_ns", r.device_total_ns);
  get(j, "share", r.share);
  get(j, "bytes_allocated", r.bytes_allocated);
  if (j.contains("kernels"))
    for (const auto& k : j.at("kernels"))
      r.kernels.emplace_back(k.at(0).get<std::string>(), k.at(1).get<int>());
  get(j, "input_dtypes", r.input_dtypes);
  get(j, "bytes_freed", r.bytes_freed);
  get(j, "launches", r.launches);
  get(j, "kernel_ns", r.kernel_ns);
  return r;
}

json to_json(const core::CaseResult& cr) {
  // Samples as parallel arrays: a third of the size of an array of objects.
  json ns = json::array(), at = json::array(), clk = json::array(), drop = json::array();
  for (const auto& s : cr.samples) {
    ns.push_back(s.ns);
    at.push_back(s.at_ns);
    clk.push_back(s.sm_clock_mhz ? json(*s.sm_clock_mhz) : json(nullptr));
    drop.push_back(s.dropped ? 1 : 0);
  }
  const auto& s = cr.summary;
  json cost = json::array();
  for (const auto& r : cr.cost) cost.push_back(to_json(r));
  json c = {{"spec", to_json(cr.spec)},
            {"status", core::to_string(cr.status)},
            {"message", cr.message},
            {"backend", cr.backend},
            {"samples", {{"ns", ns}, {"at_ns", at}, {"sm_clock_mhz", clk}, {"dropped", drop}}},
            {"summary",
             {{"n", s.n},
              {"median_ns", s.median_ns},
              {"mean_ns", s.mean_ns},
              {"min_ns", s.min_ns},
              {"max_ns", s.max_ns},
              {"q1_ns", s.q1_ns},
              {"q3_ns", s.q3_ns},
              {"ci_low_ns", s.ci_low_ns},
              {"ci_high_ns", s.ci_high_ns},
              {"ci_level", s.ci_level},
              {"converged", s.converged}}},
            {"metrics", cr.metrics},
            {"cost", cost}};
  if (cr.max_abs_error) c["max_abs_error"] = *cr.max_abs_error;
  return c;
}

json to_json(const core::Run& run) {
  json cases = json::array();
  for (const auto& cr : run.cases) cases.push_back(to_json(cr));
  return {{"id", run.id},
          {"git_commit", run.git_commit},
          {"git_branch", run.git_branch},
          {"pr", run.pr},
          {"ci_url", run.ci_url},
          {"started_ns", run.started_ns},
          {"ended_ns", run.ended_ns},
          {"status", run.status},
          {"pair_id", run.pair_id},
          {"side", run.side},
          {"env", run.env.fields},
          {"cases", cases}};
}

core::CaseResult case_result_from_json(const json& c) {
  core::CaseResult cr;
  cr.spec = case_from_json(c.at("spec"));
  cr.status = parse_enum(c, "status", cr.status, core::parse_case_status);
  get(c, "message", cr.message);
  get(c, "backend", cr.backend);
  get_opt(c, "max_abs_error", cr.max_abs_error);
  if (c.contains("samples")) {
    const json& s = c.at("samples");
    const json& ns = s.at("ns");
    cr.samples.resize(ns.size());
    for (std::size_t i = 0; i < ns.size(); ++i) {
      auto& out = cr.samples[i];
      out.ns = ns[i].get<std::int64_t>();
      out.at_ns = s.at("at_ns").at(i).get<std::int64_t>();
      const json& clk = s.at("sm_clock_mhz").at(i);
      if (!clk.is_null()) out.sm_clock_mhz = clk.get<double>();
      out.dropped = s.at("dropped").at(i).get<int>() != 0;
    }
  }
  if (c.contains("summary")) {
    const json& s = c.at("summary");
    auto& o = cr.summary;
    get(s, "n", o.n);
    get(s, "median_ns", o.median_ns);
    get(s, "mean_ns", o.mean_ns);
    get(s, "min_ns", o.min_ns);
    get(s, "max_ns", o.max_ns);
    get(s, "q1_ns", o.q1_ns);
    get(s, "q3_ns", o.q3_ns);
    get(s, "ci_low_ns", o.ci_low_ns);
    get(s, "ci_high_ns", o.ci_high_ns);
    get(s, "ci_level", o.ci_level);
    get(s, "converged", o.converged);
  }
  get(c, "metrics", cr.metrics);
  if (c.contains("cost"))
    for (const json& r : c.at("cost")) cr.cost.push_back(cost_row_from_json(r));
  return cr;
}

core::Run run_from_json(const json& j) {
  core::Run run;
  get(j, "id", run.id);
  get(j, "git_commit", run.git_commit);
  get(j, "git_branch", run.git_branch);
  get(j, "pr", run.pr);
  get(j, "ci_url", run.ci_url);
  get(j, "started_ns", run.started_ns);
  get(j, "ended_ns", run.ended_ns);
  get(j, "status", run.status);
  get(j, "pair_id", run.pair_id);
  get(j, "side", run.side);
  get(j, "env", run.env.fields);
  if (!j.contains("cases")) return run;
  for (const json& c : j.at("cases")) run.cases.push_back(case_result_from_json(c));
  return run;
}

}  // namespace attnprof::store
