// attnprof validate FILE... [--plugin LIB]...: load, check and expand scenario files without
// running anything. Prints "N files OK, M cases", or every problem as file:line:col: message
// (exit 2, from main). Built-in kernel names are checked without a worker; with --plugin, a
// worker loads the libraries and every op:ns::name is checked against the ops they registered.
#include <fmt/format.h>

#include <memory>

#include "harness/cli/commands.h"
#include "harness/util/error.h"

namespace attnprof::cli {

Action setup_validate(CLI::App& sub) {
  struct Args {
    std::vector<std::string> files, plugins;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("files", a->files, "Scenario files (YAML)")->required();
  sub.add_option("--plugin", a->plugins,
                 "Load these plugin libraries (in a worker) and check op:ns::name kernels "
                 "against the ops they register");
  return [a] {
    std::vector<core::Case> cases = load_cases_with_plugins(a->files, a->plugins, std::nullopt);
    // Not made yet is not an error here: the package is made from the scenario that validates.
    for (const auto& d : missing_packages(cases)) fmt::print(stderr, "note: {}\n", d.to_string());
    fmt::print("{} file{} OK, {} case{}\n", a->files.size(), a->files.size() == 1 ? "" : "s",
               cases.size(), cases.size() == 1 ? "" : "s");
    // Where a case would not fit this machine's memory, a note, not an error: a scenario is
    // validated on one machine and run on another.
    fmt::print("{}", memory_report(cases, {}));
    return static_cast<int>(util::exit_pass);
  };
}

}  // namespace attnprof::cli
