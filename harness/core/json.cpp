// The JSON codec of core records (json.h): the cases and results the worker protocol carries,
// the store's JSON columns, exports and imports.
#include "harness/core/json.h"

#include <fmt/format.h>

#include <limits>
#include <optional>
#include <type_traits>

#include "harness/util/error.h"

namespace attnprof::core {

using nlohmann::json;

FieldError::FieldError(std::string field, std::string problem)
    : util::InputError(
          util::Diagnostic{"run JSON", 0, 0, field.empty() ? problem : field + ": " + problem}),
      m_field(std::move(field)),
      m_problem(std::move(problem)) {}

FieldError FieldError::within(std::string_view outer) const {
  if (m_field.empty()) return FieldError(std::string(outer), m_problem);
  const bool index = m_field.front() == '[';
  return FieldError(fmt::format("{}{}{}", outer, index ? "" : ".", m_field), m_problem);
}

namespace {

// How a value looks in a message: short, on one line.
std::string shown(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return fmt::format("{} {}", v.type_name(), s);
}

// One JSON value as T, or a FieldError without a field name (the caller adds it).
template <class T>
T as(const json& v) {
  auto bad = [&](std::string_view want) {
    return FieldError("", fmt::format("expected {}, got {}", want, shown(v)));
  };
  if constexpr (std::is_same_v<T, json>) {
    return v;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) throw bad("true or false");
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) throw bad("an integer");
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
        throw bad("an integer in range");
      return static_cast<T>(u);
    }
    const auto i = v.get<std::int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (i < 0) throw bad("a non-negative integer");
    } else if (i < std::numeric_limits<T>::min() || i > std::numeric_limits<T>::max()) {
      throw bad("an integer in range");
    }
    return static_cast<T>(i);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw bad("a number");
    return v.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw bad("a string");
    return v.get<std::string>();
  } else if constexpr (requires { typename T::mapped_type; }) {
    if (!v.is_object()) throw bad("an object");
    T out;
    for (const auto& [k, x] : v.items()) {
      try {
        out.emplace(k, as<typename T::mapped_type>(x));
      } catch (const FieldError& e) {
        throw e.within(k);
      }
    }
    return out;
  } else {  // std::vector
    if (!v.is_array()) throw bad("an array");
    T out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      try {
        out.push_back(as<typename T::value_type>(v[i]));
      } catch (const FieldError& e) {
        throw e.within(fmt::format("[{}]", i));
      }
    }
    return out;
  }
}

// Runs `read` with messages about fields inside `outer` naming it.
template <class Read>
void within(std::string_view outer, Read&& read) {
  try {
    read();
  } catch (const FieldError& e) {
    throw e.within(outer);
  }
}

// The object at j[key], or an error if j[key] is something else; null when absent.
const json* object_at(const json& j, const char* key) {
  if (!j.contains(key)) return nullptr;
  const json& v = j.at(key);
  if (!v.is_object()) throw FieldError(key, fmt::format("expected an object, got {}", shown(v)));
  return &v;
}

template <class T>
void get(const json& j, const char* key, T& out) {
  if (j.contains(key)) within(key, [&] { out = as<T>(j.at(key)); });
}

template <class T>
void get_opt(const json& j, const char* key, std::optional<T>& out) {
  if (j.contains(key) && !j.at(key).is_null()) within(key, [&] { out = as<T>(j.at(key)); });
}

// j[key] as an array whose entries are T or null (a sample without the value); left empty when
// absent.
template <class T>
void optional_array(const json& j, const char* key, std::vector<std::optional<T>>& out) {
  if (!j.contains(key)) return;
  within(key, [&] {
    const json& v = j.at(key);
    if (!v.is_array()) throw FieldError("", fmt::format("expected an array, got {}", shown(v)));
    for (std::size_t i = 0; i < v.size(); ++i)
      within(fmt::format("[{}]", i), [&] {
        out.push_back(v[i].is_null() ? std::nullopt : std::optional<T>(as<T>(v[i])));
      });
  });
}

template <class E, class Parse>
E parse_enum(const json& j, const char* key, E def, Parse parse) {
  if (!j.contains(key)) return def;
  std::string s;
  get(j, key, s);
  if (auto v = parse(s)) return *v;
  throw FieldError(key, fmt::format("unknown value \"{}\"", s));
}

}  // namespace

void read_field(const json& j, const char* key, std::string& out) {
  get(j, key, out);
}
void read_field(const json& j, const char* key, std::int64_t& out) {
  get(j, key, out);
}
void read_field(const json& j, const char* key, int& out) {
  get(j, key, out);
}
void read_field(const json& j, const char* key, double& out) {
  get(j, key, out);
}
void read_field(const json& j, const char* key, bool& out) {
  get(j, key, out);
}
void read_field(const json& j, const char* key, std::optional<double>& out) {
  get_opt(j, key, out);
}

void require_object(const json& j) {
  if (!j.is_object()) throw FieldError("", fmt::format("expected an object, got {}", shown(j)));
}

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
            {"time_budget_s", c.measure.time_budget_s}, {"trace", c.measure.trace},
            {"trace_calls", c.measure.trace_calls},
            {"max_descheduled", c.measure.max_descheduled},
            {"max_descheduled_shift", c.measure.max_descheduled_shift},
            {"max_throttled", c.measure.max_throttled},
            {"l2", c.measure.l2}};
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
  // The worker reads a custom mask from this file: without it, a worker is handed the case
  // without its mask.
  if (!c.mask_file.empty()) j["mask_file"] = c.mask_file;
  if (!c.documents.empty()) j["documents"] = c.documents;
  if (c.prefix > 0) j["prefix"] = c.prefix;
  if (!c.score_mod.empty()) j["score_mod"] = c.score_mod;
  if (!c.reference.empty()) j["reference"] = c.reference;
  if (!c.kernel_args.empty()) j["kernel_args"] = c.kernel_args;
  if (!c.reference_args.empty()) j["reference_args"] = c.reference_args;
  if (c.compile_cache_warm) j["compile_cache"] = "warm";
  return j;
}

core::Case case_from_json(const json& j) {
  require_object(j);
  core::Case c;
  get(j, "key", c.key);
  get(j, "aliases", c.aliases);
  get(j, "suite", c.suite);
  get(j, "workload", c.workload);
  get(j, "kernel", c.kernel);
  if (const json* model = object_at(j, "model"))
    within("model", [&] {
      const json& g = *model;
      get(g, "name", c.model.name);
      get(g, "heads", c.model.heads);
      get(g, "kv_heads", c.model.kv_heads);
      get(g, "head_dim", c.model.head_dim);
      get(g, "hidden", c.model.hidden);
      get(g, "max_positions", c.model.max_positions);
      get(g, "sliding_window", c.model.sliding_window);
      get(g, "mlp_hidden", c.model.mlp_hidden);
      get(g, "norm", c.model.norm);
    });
  c.phase = parse_enum(j, "phase", c.phase, core::parse_phase);
  c.level = parse_enum(j, "level", c.level, core::parse_level);
  get(j, "batch", c.batch);
  get(j, "q_len", c.q_len);
  get(j, "kv_len", c.kv_len);
  get(j, "seq_lens", c.seq_lens);
  c.dtype = parse_enum(j, "dtype", c.dtype, core::parse_dtype);
  c.mask = parse_enum(j, "mask", c.mask, core::parse_mask);
  get(j, "window", c.window);
  get(j, "mask_file", c.mask_file);
  get(j, "documents", c.documents);
  get(j, "prefix", c.prefix);
  get(j, "score_mod", c.score_mod);
  get(j, "reference", c.reference);
  get(j, "kernel_args", c.kernel_args);
  get(j, "reference_args", c.reference_args);
  std::string cache;
  get(j, "compile_cache", cache);
  c.compile_cache_warm = cache == "warm";
  get_opt(j, "scale", c.scale);
  get(j, "seed", c.seed);
  if (const json* hw = object_at(j, "hardware"))
    within("hardware", [&] {
      const json& h = *hw;
      get(h, "device", c.hardware.device);
      get(h, "gpu_pattern", c.hardware.gpu_pattern);
      get(h, "threads", c.hardware.threads);
      get(h, "clock_policy", c.hardware.clock_policy);
      get_opt(h, "peak_gbps", c.hardware.peak_gbps);
      get_opt(h, "peak_tflops", c.hardware.peak_tflops);
    });
  if (const json* measure = object_at(j, "measure"))
    within("measure", [&] {
      const json& m = *measure;
      get(m, "warmup_ms", c.measure.warmup_ms);
      get(m, "min_samples", c.measure.min_samples);
      get(m, "max_samples", c.measure.max_samples);
      get(m, "target_rel_ci", c.measure.target_rel_ci);
      get(m, "time_budget_s", c.measure.time_budget_s);
      get(m, "trace", c.measure.trace);
      get(m, "trace_calls", c.measure.trace_calls);
      get(m, "max_descheduled", c.measure.max_descheduled);
      get(m, "max_descheduled_shift", c.measure.max_descheduled_shift);
      get(m, "max_throttled", c.measure.max_throttled);
      get(m, "l2", c.measure.l2);
    });
  if (const json* gate = object_at(j, "gate"))
    within("gate", [&] { get(*gate, "tolerance", c.gate.tolerance); });
  if (const json* loc = object_at(j, "loc"))
    within("loc", [&] {
      const json& l = *loc;
      get(l, "file", c.loc.file);
      get(l, "line", c.loc.line);
      get(l, "col", c.loc.col);
    });
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
          {"copies", r.copies},
          {"kernel_ns", r.kernel_ns}};
}

core::CostRow cost_row_from_json(const json& j) {
  require_object(j);
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
  // Kernels as [name, launches] pairs.
  std::vector<std::vector<json>> kernels;
  get(j, "kernels", kernels);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const auto& k = kernels[i];
    within(fmt::format("kernels[{}]", i), [&] {
      if (k.size() != 2)
        throw FieldError("", fmt::format("expected [name, launches], got {} values", k.size()));
      r.kernels.emplace_back(as<std::string>(k[0]), as<int>(k[1]));
    });
  }
  get(j, "input_dtypes", r.input_dtypes);
  get(j, "bytes_freed", r.bytes_freed);
  get(j, "launches", r.launches);
  get(j, "copies", r.copies);
  get(j, "kernel_ns", r.kernel_ns);
  return r;
}

json to_json(const core::CaseResult& cr) {
  // Samples as parallel arrays: a third of the size of an array of objects.
  json ns = json::array(), at = json::array(), clk = json::array(), drop = json::array();
  json cpu = json::array(), invol = json::array(), wait = json::array();
  bool sched = false, waits = false;  // any sample with the descheduling record (core/stability.h)
  auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  for (const auto& s : cr.samples) {
    ns.push_back(s.ns);
    at.push_back(s.at_ns);
    clk.push_back(opt(s.sm_clock_mhz));
    drop.push_back(s.dropped ? 1 : 0);
    cpu.push_back(opt(s.cpu_ns));
    invol.push_back(opt(s.invol_switches));
    wait.push_back(opt(s.wait_ns));
    sched = sched || s.cpu_ns || s.invol_switches;
    waits = waits || s.wait_ns;
  }
  json samples = {{"ns", ns}, {"at_ns", at}, {"sm_clock_mhz", clk}, {"dropped", drop}};
  if (sched) {
    samples["cpu_ns"] = cpu;
    samples["invol_switches"] = invol;
  }
  if (waits) samples["wait_ns"] = wait;
  const auto& s = cr.summary;
  json cost = json::array();
  for (const auto& r : cr.cost) cost.push_back(to_json(r));
  json c = {{"spec", to_json(cr.spec)},
            {"status", core::to_string(cr.status)},
            {"message", cr.message},
            {"backend", cr.backend},
            {"samples", samples},
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
  if (!cr.reference.empty()) c["reference"] = cr.reference;
  if (cr.kernels) c["kernels"] = *cr.kernels;
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
  require_object(c);
  core::CaseResult cr;
  if (!c.contains("spec")) throw FieldError("spec", "missing");
  within("spec", [&] { cr.spec = case_from_json(c.at("spec")); });
  cr.status = parse_enum(c, "status", cr.status, core::parse_case_status);
  get(c, "message", cr.message);
  get(c, "backend", cr.backend);
  get_opt(c, "max_abs_error", cr.max_abs_error);
  get(c, "reference", cr.reference);
  get_opt(c, "kernels", cr.kernels);
  if (const json* s = object_at(c, "samples"))
    within("samples", [&] {
      std::vector<std::int64_t> ns, at;
      std::vector<std::optional<double>> clk;
      std::vector<std::optional<std::int64_t>> cpu, invol, wait;
      std::vector<int> dropped;
      get(*s, "ns", ns);
      get(*s, "at_ns", at);
      optional_array(*s, "sm_clock_mhz", clk);
      optional_array(*s, "cpu_ns", cpu);
      optional_array(*s, "invol_switches", invol);
      optional_array(*s, "wait_ns", wait);
      get(*s, "dropped", dropped);
      // Parallel arrays: one sample is the i-th value of each. The descheduling record is
      // absent from results written before it was kept.
      if (cpu.empty()) cpu.resize(ns.size());
      if (invol.empty()) invol.resize(ns.size());
      if (wait.empty()) wait.resize(ns.size());
      for (auto [name, size] : {std::pair{"at_ns", at.size()},
                                {"sm_clock_mhz", clk.size()},
                                {"dropped", dropped.size()},
                                {"cpu_ns", cpu.size()},
                                {"invol_switches", invol.size()},
                                {"wait_ns", wait.size()}})
        if (size != ns.size())
          throw FieldError(name,
                           fmt::format("{} values, but ns has {}: the sample arrays must be "
                                       "equally long",
                                       size, ns.size()));
      cr.samples.resize(ns.size());
      for (std::size_t i = 0; i < ns.size(); ++i)
        cr.samples[i] = {ns[i], at[i], clk[i], dropped[i] != 0, cpu[i], invol[i], wait[i]};
    });
  if (const json* s = object_at(c, "summary"))
    within("summary", [&] {
      auto& o = cr.summary;
      get(*s, "n", o.n);
      get(*s, "median_ns", o.median_ns);
      get(*s, "mean_ns", o.mean_ns);
      get(*s, "min_ns", o.min_ns);
      get(*s, "max_ns", o.max_ns);
      get(*s, "q1_ns", o.q1_ns);
      get(*s, "q3_ns", o.q3_ns);
      get(*s, "ci_low_ns", o.ci_low_ns);
      get(*s, "ci_high_ns", o.ci_high_ns);
      get(*s, "ci_level", o.ci_level);
      get(*s, "converged", o.converged);
    });
  get(c, "metrics", cr.metrics);
  std::vector<json> cost;
  get(c, "cost", cost);
  for (std::size_t i = 0; i < cost.size(); ++i)
    within(fmt::format("cost[{}]", i), [&] { cr.cost.push_back(cost_row_from_json(cost[i])); });
  return cr;
}

core::Run run_from_json(const json& j) {
  require_object(j);
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
  std::vector<json> cases;
  get(j, "cases", cases);
  for (std::size_t ci = 0; ci < cases.size(); ++ci)
    within(fmt::format("cases[{}]", ci),
           [&] { run.cases.push_back(case_result_from_json(cases[ci])); });
  return run;
}

}  // namespace attnprof::core
