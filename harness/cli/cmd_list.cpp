// attnprof list [SCENARIO...] [--shard i/n] [--plugin LIB]: the expanded cases (the built-in
// smoke suite when no file is given), one per line with the shape and the expected cost that
// balances shards;
// --json: every case as the store writes it, for scripts (ci/aoti-package.py reads it rather
// than parsing scenarios itself), with, for an aoti: kernel or reference, its package and how
// it is called.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/core/json.h"
#include "harness/kernel/package.h"
#include "harness/report/format.h"
#include "harness/report/progress.h"
#include "harness/scenario/scenario.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

struct ListArgs {
  std::vector<std::string> files, plugins;
  std::optional<std::string> shard;
  bool keys_only = false;
  bool json = false;
  bool wide = false;
};

// A case for scripts: the store's JSON, plus for a compiled package (its kernel, or its
// reference) the file and the calling convention's facts the package must be made for
// (docs/scenarios.md, "Compiled packages").
nlohmann::json case_json(const core::Case& c) {
  nlohmann::json j = core::to_json(c);
  auto package = [&c](const std::string& kernel) {
    return nlohmann::json{{"path", kernel::package_path(kernel, c.loc.file)},
                          {"mask_input", kernel::takes_mask_tensor(c)},
                          {"is_causal", kernel::causal_flag(c)},
                          {"scale", kernel::softmax_scale(c)}};
  };
  if (kernel::is_package(c.kernel)) j["package"] = package(c.kernel);
  if (kernel::is_package(c.reference)) j["reference_package"] = package(c.reference);
  return j;
}

int list(const ListArgs& a) {
  std::vector<core::Case> cases = load_cases_with_plugins(a.files, a.plugins, a.shard);
  if (a.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& c : cases) all.push_back(case_json(c));
    fmt::print("{}\n", all.dump(2));
    return util::exit_pass;
  }
  if (a.keys_only) {
    for (const auto& c : cases) fmt::print("{}\n", c.key);
    return util::exit_pass;
  }
  report::Table t({"key", "device", "batch", "q_len", "kv_len", "level", "est. time"});
  t.set_key(0);
  t.set_drop_order({5, 4, 3, 2});  // level, kv_len, q_len, batch: the estimate stays
  double total = 0;
  for (const auto& c : cases) {
    const double cost = scenario::expected_cost(c);
    total += cost;
    t.add({c.key, c.hardware.device, std::to_string(c.batch), std::to_string(c.q_len),
           std::to_string(c.kv_len), core::to_string(c.level), report::format_eta(cost)});
  }
  fmt::print("{}", t.render(table_width(a.wide)));
  fmt::print("{} case{}{}, about {} (a rough estimate, for balancing shards)\n", cases.size(),
             cases.size() == 1 ? "" : "s", !a.shard ? "" : fmt::format(" in shard {}", *a.shard),
             report::format_eta(total));
  return util::exit_pass;
}

}  // namespace

Action setup_list(CLI::App& sub) {
  auto a = std::make_shared<ListArgs>();
  sub.add_option("files", a->files, "Scenario files (default: the built-in smoke suite)");
  sub.add_option("--shard", a->shard, "Only the cases CI shard INDEX/COUNT runs, e.g. 2/4");
  sub.add_flag("--keys", a->keys_only, "Print only the case keys");
  sub.add_flag("--json", a->json, "Print the cases as a JSON array (every field)");
  sub.add_option("--plugin", a->plugins,
                 "Load these plugin libraries (in a worker) and list their op:ns::name kernels' "
                 "cases, as validate and run do");
  add_wide_option(sub, a->wide);
  return [a] { return list(*a); };
}

}  // namespace attnprof::cli
