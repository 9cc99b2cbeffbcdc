// The table of subcommands. Adding one: a cmd_<name>.cpp defining setup_<name>, one
// declaration and one row here.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "harness/cli/command.h"

namespace attnprof::store {
struct HistoryFilter;
struct RunFilter;
enum class Format;
namespace pg {
class Connection;
}
}  // namespace attnprof::store

namespace attnprof::cli {

Action setup_env(CLI::App&);
Action setup_run(CLI::App&);
Action setup_compare(CLI::App&);
Action setup_baseline(CLI::App&);
Action setup_validate(CLI::App&);
Action setup_list(CLI::App&);
Action setup_history(CLI::App&);
Action setup_trend(CLI::App&);
Action setup_show(CLI::App&);
Action setup_changes(CLI::App&);
Action setup_merge(CLI::App&);
Action setup_prune(CLI::App&);
Action setup_export(CLI::App&);
Action setup_import(CLI::App&);
Action setup_check(CLI::App&);
Action setup_migrate(CLI::App&);
Action setup_annotate(CLI::App&);
Action setup_ab(CLI::App&);
Action setup_bisect(CLI::App&);
Action setup_report(CLI::App&);
Action setup_push(CLI::App&);
Action setup_pull(CLI::App&);
Action setup_package(CLI::App&);

// History filters as typed, shared by history, trend, changes and export (cmd_history.cpp).
struct HistoryFilterText {
  std::string case_glob, kernel, metric, branch, commits, since, until, env;
  std::optional<int> last;
};
// --branch, --since, --until, --env: which runs (export, and history's own filters).
void add_run_filters(CLI::App& sub, HistoryFilterText& filter);
void add_history_filters(CLI::App& sub, HistoryFilterText& filter);
store::HistoryFilter to_filter(const HistoryFilterText& filter);  // util::InputError if bad
store::Format parse_format_option(const std::string& text);
store::RunFilter to_run_filter(const HistoryFilterText& filter);  // the run filters alone

// The fleet server's URL (push --to, pull --from; default $ATTNPROF_POSTGRES_URL) and its
// connection: bad input (exit 2) when none is named or it is no postgresql:// URL.
// (cmd_push.cpp)
void add_server_option(CLI::App& sub, std::string& url, const char* flag);
store::pg::Connection connect_server(const std::string& url, const char* flag);

inline std::span<const Command> commands() {
  static const Command table[] = {
      {"run", "Run scenarios, check and measure each case, store the run", setup_run},
      {"ab", "Measure a base and a head build interleaved; exit 1 on a regression", setup_ab},
      {"bisect", "Find the first bad commit of a range, each step a paired A/B", setup_bisect},
      {"compare", "Compare a run against a baseline; exit 1 on a regression", setup_compare},
      {"baseline", "Write or refresh a baseline file from a stored run", setup_baseline},
      {"annotate", "Record accept, reset or ignore decisions that compare honours", setup_annotate},
      {"validate", "Check scenario files; print every error as file:line:col", setup_validate},
      {"list", "List the expanded cases; --shard i/n shows one CI shard's", setup_list},
      {"package", "Package your own attention module (aoti:PATH.pt2) for a scenario's cases",
       setup_package},
      {"env", "Describe this machine: CPU, LibTorch, CUDA, devices", setup_env},
      {"history", "Query stored history: a metric per case and run (table, CSV, JSON)",
       setup_history},
      {"trend", "A case's history as a terminal sparkline", setup_trend},
      {"show", "Show a stored run; --case prints a case's cost matrix", setup_show},
      {"changes", "Change points in each case's history, with their commit ranges", setup_changes},
      {"merge", "Fold result databases (e.g. CI shards) into one history", setup_merge},
      {"prune", "Delete old runs by retention policy; annotated runs stay", setup_prune},
      {"export", "Write history as JSON lines, or results for Bencher, Otava, ... (--format)",
       setup_export},
      {"import", "Read history written by export", setup_import},
      {"push", "Send runs to a fleet's PostgreSQL server (one transaction per run)", setup_push},
      {"pull", "Take a slice of a fleet's PostgreSQL server into a local history", setup_pull},
      {"check", "Read every page of the history (--full: integrity_check); exit 3 if damaged",
       setup_check},
      {"migrate", "Upgrade a history at an older schema in place, so reads stop upgrading a copy",
       setup_migrate},
      {"report", "Write a self-contained HTML report of a run or of a case's history",
       setup_report},
  };
  return table;
}

}  // namespace attnprof::cli
