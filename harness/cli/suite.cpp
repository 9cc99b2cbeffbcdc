// The cases a command works on, shared by run, ab, list and validate: scenario files or the
// embedded smoke suite, a CI shard, case globs, and the check of plugin ops against what the
// worker's plugins registered.
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "harness/cli/command.h"
#include "harness/kernel/names.h"
#include "harness/kernel/package.h"
#include "harness/kernel/python.h"
#include "harness/scenario/diags.h"
#include "harness/scenario/scenario.h"
#include "harness/util/error.h"
#include "harness/util/format.h"
#include "harness/util/machine.h"
#include "harness/worker/supervisor.h"

namespace attnprof::cli {

std::vector<core::Case> load_cases_with_plugins(const std::vector<std::string>& files,
                                                const std::vector<std::string>& plugins,
                                                const std::optional<std::string>& shard) {
  if (plugins.empty()) return load_cases(files, kernel::builtin_names(), shard, {});
  worker::Spawn spawn{worker::default_worker(), {}, "worker"};
  for (const auto& p : plugins) spawn.args.push_back("--plugin=" + p);
  worker::Supervisor sup(spawn);
  const worker::Described& d = sup.described();
  std::vector<core::Case> cases = load_cases(files, d.kernels, shard, {});
  check_plugin_ops(cases, d);
  return cases;
}

std::vector<core::Case> load_cases(const std::vector<std::string>& files,
                                   const std::vector<std::string>& kernels,
                                   const std::optional<std::string>& shard,
                                   const std::vector<std::string>& case_globs) {
  scenario::LoadOptions lo;
  lo.kernels = kernels;
  scenario::Suite suite = files.empty() ? scenario::load_text(scenario::embedded_smoke_suite(),
                                                              scenario::smoke_suite_name(), lo)
                                        : scenario::load(files, lo);
  std::vector<core::Case> cases = suite.cases;
  if (shard) {
    auto [i, n] = scenario::parse_shard(*shard);
    cases = scenario::shard(cases, i, n);
  }
  if (!case_globs.empty()) {
    std::erase_if(cases, [&](const core::Case& c) {
      for (const auto& g : case_globs)
        if (fnmatch(g.c_str(), c.key.c_str(), 0) == 0) return false;
      return true;
    });
  }
  if (cases.empty())
    throw util::InputError(
        util::Diagnostic{case_globs.empty() ? "--shard" : "--case", 0, 0,
                         "no case to run: the filters leave none of the suite's " +
                             std::to_string(suite.cases.size()) + " cases"});
  return cases;
}

void check_plugin_ops(const std::vector<core::Case>& cases, const worker::Described& described) {
  std::vector<std::string> ops;
  for (const auto& p : described.plugins) ops.insert(ops.end(), p.ops.begin(), p.ops.end());
  std::vector<util::Diagnostic> diags;
  std::set<std::string> reported;
  for (const auto& c : cases) {
    if (!c.kernel.starts_with("op:")) continue;
    const std::string op = c.kernel.substr(3);
    if (std::find(ops.begin(), ops.end(), op) != ops.end() || !reported.insert(op).second)
      continue;
    std::string msg;
    if (described.plugins.empty()) {
      msg = fmt::format("kernel \"{}\": no plugin is loaded; load the library that registers "
                        "\"{}\" with --plugin",
                        c.kernel, op);
    } else {
      std::string registered;
      for (const auto& o : ops) registered += (registered.empty() ? "" : ", ") + o;
      msg = fmt::format("kernel \"{}\": the loaded plugins registered no op \"{}\"{} "
                        "(they registered: {})",
                        c.kernel, op, scenario::did_you_mean(op, ops),
                        registered.empty() ? "nothing" : registered);
    }
    diags.push_back(util::Diagnostic{c.loc.file, c.loc.line, c.loc.col, msg});
  }
  if (!diags.empty()) throw util::InputError(std::move(diags));
}

std::vector<util::Diagnostic> missing_packages(const std::vector<core::Case>& cases) {
  std::vector<util::Diagnostic> diags;
  std::set<std::string> seen;
  for (const auto& c : cases) {
    for (const std::string* name : {&c.kernel, &c.reference}) {
      if (kernel::is_python(*name)) {
        const std::string path = kernel::python_file(*name, c.loc.file);
        if (path.empty()) continue;  // flex and hf: have no file
        std::error_code ec;
        if (!seen.insert(path).second || std::filesystem::is_regular_file(path, ec)) continue;
        diags.push_back(util::Diagnostic{
            c.loc.file, c.loc.line, c.loc.col,
            fmt::format("{} \"{}\": no Python file at {} (PATH is relative to the scenario's "
                        "folder)",
                        name == &c.kernel ? "kernel" : "reference", *name, path)});
        continue;
      }
      if (!kernel::is_package(*name)) continue;
      const std::string path = kernel::package_path(*name, c.loc.file);
      std::error_code ec;
      if (!seen.insert(path).second || std::filesystem::is_regular_file(path, ec)) continue;
      diags.push_back(util::Diagnostic{
          c.loc.file, c.loc.line, c.loc.col,
          name == &c.kernel
              ? fmt::format("kernel \"{}\": no package at {}; make it from your module with "
                            "attnprof package FILE.py:NAME --scenario {} -o {}, or from "
                            "attnprof's own SDPA module with ci/aoti-package.sh {}",
                            c.kernel, path, c.loc.file, path, c.loc.file)
              : fmt::format("reference \"{}\" of {}: no package at {}; make it with attnprof "
                            "package MODULE --scenario {} -o {}",
                            c.reference, c.key, path, c.loc.file, path)});
    }
  }
  return diags;
}

namespace {

// The memory a case may use here, and what it is: nullopt when unknown (a GPU not described).
std::optional<std::pair<double, std::string>> memory_for(const core::Case& c,
                                                         const std::vector<double>& devices_gib) {
  if (c.hardware.device == "cpu") {
    if (auto m = util::available_memory())
      return std::pair{static_cast<double>(*m), std::string("this machine has available")};
    return std::nullopt;
  }
  const auto colon = c.hardware.device.find(':');
  const std::size_t index =
      colon == std::string::npos ? 0 : std::stoul(c.hardware.device.substr(colon + 1));
  if (index >= devices_gib.size() || devices_gib[index] <= 0) return std::nullopt;
  return std::pair{devices_gib[index] * 1024 * 1024 * 1024,
                   fmt::format("device {} has", c.hardware.device)};
}

}  // namespace

std::optional<std::string> too_big_for_machine(const core::Case& c,
                                               const std::vector<double>& devices_gib) {
  const double need = scenario::case_memory_bytes(c);
  const auto have = memory_for(c, devices_gib);
  if (!have || need <= have->first) return std::nullopt;
  return fmt::format(
      "needs about {} (estimated from its shape: inputs, output, the check's fp32 "
      "scores), more than the {} {}",
      util::format_bytes(need), util::format_bytes(have->first), have->second);
}

std::string memory_report(const std::vector<core::Case>& cases,
                          const std::vector<double>& devices_gib) {
  const core::Case* largest = nullptr;
  for (const auto& c : cases)
    if (!largest || scenario::case_memory_bytes(c) > scenario::case_memory_bytes(*largest))
      largest = &c;
  if (!largest) return "";
  std::string out = fmt::format("memory: the largest case needs about {} ({})\n",
                                util::format_bytes(scenario::case_memory_bytes(*largest)), largest->key);
  for (const auto& c : cases)
    if (auto why = too_big_for_machine(c, devices_gib))
      out += fmt::format("{}:{}:{}: note: case {} {}; `attnprof run` skips it here\n", c.loc.file,
                         c.loc.line, c.loc.col, c.key, *why);
  return out;
}

}  // namespace attnprof::cli
