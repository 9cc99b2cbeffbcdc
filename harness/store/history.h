// History queries: one metric of matching cases over matching runs. Every filter is a bound
// parameter; the only SQL text chosen from input is a summary column, picked from a fixed list.
// Filters, ordering and the newest-N cut all run in SQL on indexes (schema.cpp, v4), one
// statement per case and metric, so reading a case's newest 30 runs costs about 30 index probes
// however long the history is.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/stability.h"
#include "harness/store/database.h"

namespace attnprof::store {

// Summary fields, queryable as metrics under these names next to the named metrics of a case;
// so is the check's largest error, a column of the case (core::kMaxAbsErrorMetric,
// "accuracy.max_abs_error").
inline constexpr const char* summary_metrics[] = {
    "summary.median_ns", "summary.mean_ns", "summary.min_ns",    "summary.max_ns",
    "summary.q1_ns",     "summary.q3_ns",   "summary.ci_low_ns", "summary.ci_high_ns"};
inline constexpr const char* default_metric = "summary.median_ns";

struct HistoryFilter {
  std::string case_glob = "*";          // SQLite GLOB on the case key (case-sensitive)
  std::vector<std::string> case_keys;   // exact keys (each must also match case_glob); empty:
                                        // every stored key case_glob matches
  std::string kernel;                   // exact; empty: any
  std::string metric = default_metric;  // GLOB on the metric name
  std::string branch;                   // exact; empty: any
  std::string commit_from, commit_to;   // commit prefixes; the runs between them, inclusive
  std::string env_fingerprint;          // prefix; empty: any
  std::optional<std::int64_t> since_ns, until_ns;
  std::string status = "ok";  // case status; empty: any
  std::optional<int> last;    // only the newest N runs per case and metric
};

struct HistoryRow {
  std::string run_id, git_commit, git_branch, env_fingerprint;
  std::int64_t started_ns = 0;
  std::string case_key, kernel, status, metric;
  double value = 0;
};

// Ordered by case key, metric, then run start (oldest first). util::InputError when a commit
// of the range matches no run.
std::vector<HistoryRow> history(Database& db, const HistoryFilter& filter);

// What the worker stored of a busy machine for each (case key, run id) the filter matches (its
// metric ignored): the figures core::unstable judges. `gpu`: also those only a GPU case stores
// (the throttled share, the other processes).
std::map<std::pair<std::string, std::string>, core::StabilityFigures> stability_figures(
    Database& db, HistoryFilter filter, bool gpu = true);

// What SQLite plans for each distinct statement history() runs for this filter on this
// database: EXPLAIN QUERY PLAN's detail lines, e.g. "SEARCH runs USING INDEX runs_by_branch
// (git_branch=? AND env_fingerprint=?)". Tests check them, so a schema change that turns a read
// into a table scan fails a test instead of slowing every gate down.
struct QueryPlan {
  std::string sql;
  std::vector<std::string> steps;
};
std::vector<QueryPlan> explain_history(Database& db, const HistoryFilter& filter);

}  // namespace attnprof::store
