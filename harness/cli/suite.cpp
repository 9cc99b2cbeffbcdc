// The cases a command works on, shared by run, ab, list and validate: scenario files or the
// embedded smoke suite, a CI shard, case globs, and the check of plugin ops against what the
// worker's plugins registered.
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "harness/cli/command.h"
#include "harness/kernel/package.h"
#include "harness/scenario/diags.h"
#include "harness/scenario/scenario.h"
#include "harness/util/error.h"
#include "harness/worker/supervisor.h"

namespace attnprof::cli {

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
    if (!kernel::is_package(c.kernel)) continue;
    const std::string path = kernel::package_path(c);
    std::error_code ec;
    if (!seen.insert(path).second || std::filesystem::is_regular_file(path, ec)) continue;
    diags.push_back(util::Diagnostic{
        c.loc.file, c.loc.line, c.loc.col,
        fmt::format("kernel \"{}\": no package at {}; make it with ci/aoti-package.sh {}", c.kernel,
                    path, c.loc.file)});
  }
  return diags;
}

}  // namespace attnprof::cli
