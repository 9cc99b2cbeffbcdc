// attnprof validate FILE...: load, check and expand scenario files without running anything.
// Prints "N files OK, M cases", or every problem as file:line:col: message (exit 2, from main).
#include <fmt/format.h>

#include <memory>

#include "harness/cli/commands.h"
#include "harness/kernel/registry.h"
#include "harness/scenario/scenario.h"
#include "harness/util/error.h"

namespace attnprof::cli {

Action setup_validate(CLI::App& sub) {
  auto files = std::make_shared<std::vector<std::string>>();
  sub.add_option("files", *files, "Scenario files (YAML)")->required();
  return [files] {
    scenario::LoadOptions opts;
    opts.kernels = kernel::registry().names();
    scenario::Suite suite = scenario::load(*files, opts);
    fmt::print("{} file{} OK, {} case{}\n", files->size(), files->size() == 1 ? "" : "s",
               suite.cases.size(), suite.cases.size() == 1 ? "" : "s");
    return static_cast<int>(util::exit_pass);
  };
}

}  // namespace attnprof::cli
