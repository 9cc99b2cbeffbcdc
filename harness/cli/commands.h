// The table of subcommands. Adding one: a cmd_<name>.cpp defining setup_<name>, one
// declaration and one row here.
#pragma once

#include <span>

#include "harness/cli/command.h"

namespace attnprof::cli {

Action setup_env(CLI::App&);
Action setup_run(CLI::App&);
Action setup_compare(CLI::App&);
Action setup_validate(CLI::App&);

inline std::span<const Command> commands() {
  static const Command table[] = {
      {"run", "Run scenarios, check and measure each case, store the run", setup_run},
      {"compare", "Compare a run against a baseline; exit 1 on a regression", setup_compare},
      {"validate", "Check scenario files; print every error as file:line:col", setup_validate},
      {"env", "Describe this machine: CPU, LibTorch, CUDA, devices", setup_env},
  };
  return table;
}

}  // namespace attnprof::cli
