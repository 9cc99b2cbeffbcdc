// One subcommand of the attnprof CLI: a name, a one-line help, and a function that declares its
// options on a CLI11 sub-app and returns the action to run after parsing. One file per
// subcommand (cmd_<name>.cpp); the table in main.cpp lists them all.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/util/error.h"

namespace attnprof::worker {
struct Described;
}

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

// The check every option taking a case-key or metric glob carries (util::glob_problem): a bad
// glob is a usage error (exit 2) naming the option and the character, before anything is opened.
CLI::Validator glob_check();

// costmatrix::render_table within `width` columns (0: all), with a bad --sort key reported as
// bad input (exit 2).
std::string sort_or_bad_input(const std::vector<core::CostRow>& rows, const std::string& sort,
                              int row_limit, std::size_t width = 0);
// A case's cost matrix as `show --case` and `run --cost-rows` print it: "\ncost matrix: KEY\n",
// the table (sort_or_bad_input), then its summary (costmatrix/summary.h: what the case ran, its
// accuracy, its memory figures); a case without rows says why there are none.
std::string case_cost_text(const core::CaseResult& r, const std::string& sort, int row_limit,
                           std::size_t width);

// --wide, which every command that prints a table takes: the table whole, however wide.
// table_width: 0 with it, else what the console holds (report::console_width: $COLUMNS, the
// terminal, else 120).
void add_wide_option(CLI::App& sub, bool& wide);
std::size_t table_width(bool wide);

// The cases a command works on: the scenario files (the embedded smoke suite when none), checked
// against `kernels`, then one CI shard ("i/n"; none: all) and the cases matching any of
// `case_globs` (empty: all). util::InputError when the filters leave none.
std::vector<core::Case> load_cases(const std::vector<std::string>& files,
                                   const std::vector<std::string>& kernels,
                                   const std::optional<std::string>& shard,
                                   const std::vector<std::string>& case_globs);

// load_cases with no case filter, the kernels checked against the built-in names, or with
// `plugins` against the ops a worker that loaded them registered (check_plugin_ops): what
// validate and list read.
std::vector<core::Case> load_cases_with_plugins(const std::vector<std::string>& files,
                                                const std::vector<std::string>& plugins,
                                                const std::optional<std::string>& shard);

// Every "op:ns::name" kernel of `cases` must be an op a loaded plugin registered: checked before
// anything is measured, so a typo costs seconds, not a suite's run. util::InputError at the
// case's file:line:col, with the ops the plugins did register and a did-you-mean.
void check_plugin_ops(const std::vector<core::Case>& cases, const worker::Described& described);

// The "aoti:PATH.pt2" packages and "py:PATH.py:NAME" files of `cases` that are not there, once
// per file, at the spot that names them, with the command that makes a package. run and ab refuse such a suite (bad input,
// before anything is measured); validate only notes them, since a package is a build artifact
// made from the scenario after it validates.
std::vector<util::Diagnostic> missing_packages(const std::vector<core::Case>& cases);

// Memory (scenario::case_memory_bytes against what this machine has: the host's available
// memory for a CPU case, the device's for a GPU one). Why `c` cannot run here, with both
// figures, or nullopt. `devices_gib`: each CUDA device's memory, by index.
std::optional<std::string> too_big_for_machine(const core::Case& c,
                                               const std::vector<double>& devices_gib);
// validate's line: the largest estimate and its case, and each case too big for this machine
// (or "" when there are no cases).
std::string memory_report(const std::vector<core::Case>& cases,
                          const std::vector<double>& devices_gib);

}  // namespace attnprof::cli
