// attnprof's entry point: the table of subcommands, and the one place that turns errors into
// exit codes (0 pass, 1 gate failed, 2 bad input, 3 environment or harness failure).
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "harness/cli/bounds.h"
#include "harness/cli/command.h"
#include "harness/cli/commands.h"
#include "harness/cli/options.h"
#include "harness/cli/repeat_hint.h"
#include "harness/costmatrix/summary.h"
#include "harness/costmatrix/table.h"
#include "harness/report/format.h"
#include "harness/util/error.h"
#include "harness/util/glob.h"
#include "harness/worker/protocol.h"

namespace attnprof::cli {

void add_db_option(CLI::App& sub, std::string& path) {
  const char* env = std::getenv("ATTNPROF_DB");
  path = env && *env ? env : "attnprof.db";
  sub.add_option("--db", path, "SQLite history (default: $ATTNPROF_DB, else ./attnprof.db)")
      ->check(
          [](const std::string& v) -> std::string {
            // A server is shared by a fleet; commands read and write a local slice of it.
            if (!v.starts_with("postgresql://") && !v.starts_with("postgres://")) return "";
            return "a PostgreSQL server is not a history file: take a slice of it with "
                   "`attnprof pull --from URL --db FILE` and send runs with `attnprof push`";
          },
          "");
}

CLI::Validator glob_check() {
  return CLI::Validator(
      [](std::string& glob) -> std::string {
        const auto problem = util::glob_problem(glob);
        return problem ? util::describe(glob, *problem) : std::string();
      },
      "");
}

std::string sort_or_bad_input(const std::vector<core::CostRow>& rows, const std::string& sort,
                              int row_limit, std::size_t width) {
  try {
    return costmatrix::render_table(rows, sort, row_limit, width);
  } catch (const std::invalid_argument& e) {
    throw util::InputError(util::Diagnostic{"--sort", 0, 0, e.what()});
  }
}

std::string case_cost_text(const core::CaseResult& r, const std::string& sort, int row_limit,
                           std::size_t width) {
  const std::string summary = costmatrix::render_summary(r, width);
  if (r.cost.empty())
    return fmt::format(
        "\ncost matrix: {}: none stored (the case did not complete, or ran with --no-trace)\n{}",
        r.spec.key, summary);
  return fmt::format("\ncost matrix: {}\n{}{}", r.spec.key,
                     sort_or_bad_input(r.cost, sort, row_limit, width), summary);
}

void add_wide_option(CLI::App& sub, bool& wide) {
  sub.add_flag("--wide", wide,
               "Print tables whole, however wide (default: fit $COLUMNS, the terminal, else 120 "
               "columns, leaving columns out)");
}

std::size_t table_width(bool wide) {
  return wide ? 0 : report::console_width();
}

}  // namespace attnprof::cli

int main(int argc, char** argv) {
  using namespace attnprof;
  // Whole lines: stdout (reports) and stderr (progress, warnings) go to one CI log, and a
  // buffered report must not be cut by a warning in the middle of its line.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CLI::App app{"attnprof: regression-testing harness for attention kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("attnprof {} (worker protocol {})",
                                                worker::build_version, worker::protocol_version));
  std::vector<std::pair<CLI::App*, cli::Action>> actions;
  for (const cli::Command& c : cli::commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    actions.emplace_back(sub, c.setup(*sub));
  }
  cli::one_value_per_occurrence(app);
  cli::bound_every_number(app);
  const std::optional<cli::AfterValue> after = cli::after_repeatable(app, argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    if (rc != 0 && after && std::string(e.what()).find(after->token) != std::string::npos)
      cli::print_repeat_hint(*after);
    return rc == 0 ? 0 : util::exit_bad_input;
  }
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const util::InputError& e) {
    bool named = false;
    for (const auto& d : e.diagnostics()) {
      fmt::print(stderr, "{}\n", d.to_string());
      named = named || (after && d.file == after->token && !cli::names_scenario(d.file));
    }
    if (named) cli::print_repeat_hint(*after);
    return util::exit_bad_input;
  } catch (const util::EnvironmentError& e) {
    fmt::print(stderr, "attnprof: {}\n", e.what());
    return util::exit_environment;
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnprof: internal error: {}\n", e.what());
    return util::exit_environment;
  } catch (...) {
    // Nothing may escape to the runtime (an abort with a core dump is no exit code a CI job
    // can read): whatever was thrown, exit 3 with one line.
    fmt::print(stderr, "attnprof: internal error: an exception of unknown type\n");
    return util::exit_environment;
  }
  return util::exit_bad_input;
}
