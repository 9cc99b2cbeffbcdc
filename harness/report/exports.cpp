// The formats other tools read (exports.h): Bencher, github-action-benchmark, PyTorch's OSS
// benchmark database, Apache Otava.
#include "harness/report/exports.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/store/render.h"
#include "harness/util/error.h"

namespace attnprof::report {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr const char* kMedianMetric = "summary.median_ns";

// The cases a one-run export writes: those with a figure.
std::vector<const core::CaseResult*> measured(const core::Run& run) {
  std::vector<const core::CaseResult*> out;
  for (const auto& c : run.cases)
    if (c.status == core::CaseStatus::ok && c.summary.n > 0) out.push_back(&c);
  return out;
}

// An interval is recorded when it brackets the median; rows stored without one hold zeros.
bool has_interval(const core::Summary& s) {
  return s.ci_low_ns > 0 && s.ci_low_ns <= s.median_ns && s.median_ns <= s.ci_high_ns;
}

std::string env_field(const core::Run& run, const std::string& name) {
  auto it = run.env.fields.find(name);
  return it == run.env.fields.end() ? std::string() : it->second;
}

// The model's name a case belongs to: its preset, else the key's first part.
std::string model_name(const core::CaseResult& c) {
  if (!c.spec.model.name.empty()) return c.spec.model.name;
  return c.spec.key.substr(0, c.spec.key.find('/'));
}

}  // namespace

std::optional<ExportFormat> parse_export_format(std::string_view s) {
  static const std::pair<std::string_view, ExportFormat> names[] = {
      {"jsonl", ExportFormat::jsonl},
      {"bmf", ExportFormat::bmf},
      {"gab", ExportFormat::gab},
      {"otava", ExportFormat::otava},
      {"pytorch", ExportFormat::pytorch}};
  for (const auto& [name, f] : names)
    if (s == name) return f;
  return std::nullopt;
}

bool holds_one_run(ExportFormat f) {
  return f == ExportFormat::bmf || f == ExportFormat::gab || f == ExportFormat::pytorch;
}

std::string to_bmf(const core::Run& run) {
  ordered_json out = ordered_json::object();
  for (const auto* c : measured(run)) {
    ordered_json latency = {{"value", c->summary.median_ns}};
    if (has_interval(c->summary)) {
      latency["lower_value"] = c->summary.ci_low_ns;
      latency["upper_value"] = c->summary.ci_high_ns;
    }
    out[c->spec.key] = {{"latency", latency}};
  }
  return out.dump(2) + "\n";
}

std::string to_gab(const core::Run& run) {
  ordered_json out = ordered_json::array();
  for (const auto* c : measured(run)) {
    const auto& s = c->summary;
    ordered_json bench = {{"name", c->spec.key}, {"unit", "ns"}, {"value", s.median_ns}};
    std::string extra = fmt::format("median of {} samples", s.n);
    if (has_interval(s)) {
      bench["range"] = fmt::format("± {:.1f}", (s.ci_high_ns - s.ci_low_ns) / 2);
      extra += fmt::format("; {:.0f}% interval [{:.1f}, {:.1f}] ns", 100 * s.ci_level, s.ci_low_ns,
                           s.ci_high_ns);
    }
    bench["extra"] = fmt::format("{}; attnprof run {} at {}", extra, run.id, run.git_commit);
    out.push_back(std::move(bench));
  }
  return out.dump(2) + "\n";
}

std::string to_pytorch(const core::Run& run) {
  // The database's runner tuple, every field given: a GPU's name where the run was on one.
  const bool gpu = env_field(run, "device.kind") == "cuda";
  std::map<std::string, std::string> env(run.env.fields.begin(), run.env.fields.end());
  env["fingerprint"] = run.env.fingerprint();
  int threads = 0;
  try {
    threads = std::stoi(env_field(run, "cpu.threads"));
  } catch (const std::exception&) {
    // Not recorded (a GPU run) or not a number: the tuple's 0, "unknown".
  }
  ordered_json runner = {{"name", ""},
                         {"type", gpu ? "cuda" : "cpu"},
                         {"cpu_info", env_field(run, "cpu.model")},
                         {"cpu_count", threads},
                         {"mem_info", ""},
                         {"avail_mem_in_gb", 0},
                         {"gpu_info", gpu ? env_field(run, "device.name") : ""},
                         {"gpu_count", gpu ? 1 : 0},
                         {"gpu_mem_info", ""},
                         {"avail_gpu_mem_in_gb", 0},
                         {"extra_info", env}};
  ordered_json out = ordered_json::array();
  for (const auto* c : measured(run)) {
    const auto& spec = c->spec;
    const auto& s = c->summary;
    ordered_json metric_info = {{"samples", std::to_string(s.n)}};
    if (has_interval(s)) {
      metric_info["ci_low_ns"] = fmt::format("{}", s.ci_low_ns);
      metric_info["ci_high_ns"] = fmt::format("{}", s.ci_high_ns);
      metric_info["ci_level"] = fmt::format("{}", s.ci_level);
    }
    out.push_back({{"benchmark",
                    {{"name", "attnprof"},
                     {"mode", "inference"},
                     {"dtype", core::to_string(spec.dtype)},
                     {"extra_info",
                      {{"case", spec.key},
                       {"suite", spec.suite},
                       {"workload", spec.workload},
                       {"run", run.id},
                       {"commit", run.git_commit},
                       {"branch", run.git_branch}}}}},
                   {"model",
                    {{"name", model_name(*c)},
                     {"type", fmt::format("attention {}", core::to_string(spec.level))},
                     {"backend", spec.kernel},
                     {"origins", {"attnprof"}},
                     {"extra_info",
                      {{"phase", core::to_string(spec.phase)},
                       {"batch", std::to_string(spec.batch)},
                       {"q_len", std::to_string(spec.q_len)},
                       {"kv_len", std::to_string(spec.kv_len)},
                       {"heads", std::to_string(spec.model.heads)},
                       {"kv_heads", std::to_string(spec.model.kv_heads)},
                       {"head_dim", std::to_string(spec.model.head_dim)},
                       {"mask", core::to_string(spec.mask)}}}}},
                   {"metric",
                    {{"name", kMedianMetric},
                     {"benchmark_values", {s.median_ns}},
                     {"extra_info", metric_info}}},
                   {"runners", {runner}}});
  }
  return out.dump(2) + "\n";
}

OtavaExport to_otava(const std::vector<store::HistoryRow>& rows) {
  std::set<std::string> envs;
  for (const auto& r : rows) envs.insert(r.env_fingerprint);
  if (envs.size() > 1) {
    std::string list;
    for (const auto& e : envs) list += (list.empty() ? "" : ", ") + e;
    throw util::InputError(util::Diagnostic{
        "--format otava", 0, 0,
        fmt::format("the runs span {} environments ({}): a series is one machine's; pick one "
                    "with --env",
                    envs.size(), list)});
  }
  // The runs in start order (the id breaks a tie), and each case's value in each.
  struct RunRow {
    std::string commit, branch;
    std::map<std::string, double> values;
  };
  std::map<std::pair<std::int64_t, std::string>, RunRow> runs;
  std::vector<std::string> cases;  // each once, in the rows' order (by key)
  std::set<std::string> seen;
  for (const auto& r : rows) {
    auto& run = runs[{r.started_ns, r.run_id}];
    run.commit = r.git_commit;
    run.branch = r.git_branch;
    run.values[r.case_key] = r.value;
    if (seen.insert(r.case_key).second) cases.push_back(r.case_key);
  }
  OtavaExport out;
  out.runs = static_cast<int>(runs.size());
  for (const auto& key : cases) {
    bool everywhere = true;
    for (const auto& [_, run] : runs) everywhere = everywhere && run.values.count(key);
    (everywhere ? out.cases : out.left_out).push_back(key);
  }
  std::vector<std::string> header = {"time", "commit", "branch", "run"};
  header.insert(header.end(), out.cases.begin(), out.cases.end());
  out.csv = store::csv_line(header);
  for (const auto& [at, run] : runs) {
    std::vector<std::string> line = {store::format_time(at.first), run.commit, run.branch,
                                     at.second};
    for (const auto& key : out.cases) line.push_back(fmt::format("{}", run.values.at(key)));
    out.csv += store::csv_line(line);
  }
  return out;
}

std::string otava_config(const std::string& name, const std::string& csv_path,
                         const std::vector<std::string>& cases) {
  // JSON's quoted strings are YAML's double-quoted scalars: keys with any character stay keys.
  const auto q = [](const std::string& s) { return json(s).dump(); };
  std::string out = fmt::format(
      "# Apache Otava's test for attnprof's export (attnprof export --format otava).\n"
      "tests:\n  {}:\n    type: csv\n    file: {}\n    time_column: time\n"
      "    attributes: [commit, branch, run]\n    metrics:\n",
      q(name), q(csv_path));
  for (const auto& c : cases) out += fmt::format("      {}:\n        direction: -1\n", q(c));
  return out;
}

}  // namespace attnprof::report
