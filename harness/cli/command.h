// One subcommand of the attnprof CLI: a name, a one-line help, and a function that declares its
// options on a CLI11 sub-app and returns the action to run after parsing. One file per
// subcommand (cmd_<name>.cpp); the table in main.cpp lists them all.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "harness/core/types.h"

namespace attnprof::cli {

using Action = std::function<int()>;  // returns the exit code (util::ExitCode)

struct Command {
  const char* name;
  const char* help;
  Action (*setup)(CLI::App& sub);
};

// Options shared by the subcommands that touch the history database.
// Order: --db flag, then $ATTNPROF_DB, then ./attnprof.db.
void add_db_option(CLI::App& sub, std::string& path);

// costmatrix::render_table, with a bad --sort key reported as bad input (exit 2).
std::string sort_or_bad_input(const std::vector<core::CostRow>& rows, const std::string& sort,
                              int row_limit);

}  // namespace attnprof::cli
