// Change points in history: for each case, metric and environment, the series of values over
// runs (oldest first) goes through stats::detect_change_points; each change is reported with the
// commit range it happened in (the last run before it, the first run after it).
#pragma once

#include <string>
#include <vector>

#include "harness/stats/changepoint.h"
#include "harness/store/history.h"

namespace attnprof::store {

struct CaseChange {
  std::string case_key, metric, env_fingerprint, git_branch;
  stats::ChangePoint point;
  std::string commit_before, commit_after;  // the change landed in (before, after]
  std::string run_before, run_after;
  std::int64_t at_ns = 0;  // start of the first run after the change
  int series_length = 0;
};

// Never compares across environments: a series is one (case, metric, environment).
std::vector<CaseChange> find_changes(Database& db, const HistoryFilter& filter,
                                     const stats::ChangePointSettings& settings = {});

}  // namespace attnprof::store
