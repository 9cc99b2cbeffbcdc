// attnprof env: what this machine is (CPU, LibTorch, CUDA runtime and driver, devices).
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/env/environment.h"

namespace attnprof::cli {

Action setup_env(CLI::App&) {
  return [] {
    env::Description d = env::describe();
    fmt::print("{}", env::render(d));
    fmt::print("fingerprint (cpu): {}\n", env::fingerprint_for(d, "cpu").fingerprint());
    for (const auto& dev : d.devices)
      fmt::print("fingerprint (cuda:{}): {}\n", dev.index,
                 env::fingerprint_for(d, fmt::format("cuda:{}", dev.index)).fingerprint());
    return 0;
  };
}

}  // namespace attnprof::cli
