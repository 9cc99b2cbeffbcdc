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
  // Between two runs of one commit (A..A): the machine or its load moved, never the code.
  bool within_one_commit() const { return !commit_before.empty() && commit_before == commit_after; }
};

// Runs whose case was unstable (core/stability.h: descheduled, throttled or on a shared GPU, by
// the figures the worker stored, against the default measure settings) are left out of each
// series, as baselines leave them out: one busy-machine run of a few can hide a real step from
// the t-test, or make one. `include` keeps them; `left_out` counts the (case, run) pairs left out.
struct UnstableRuns {
  bool include = false;
  int left_out = 0;
};

// Never compares across environments: a series is one (case, metric, environment).
std::vector<CaseChange> find_changes(Database& db, const HistoryFilter& filter,
                                     const stats::ChangePointSettings& settings = {},
                                     UnstableRuns* unstable = nullptr);

// The slowdown a bisect can start from: the newest change up whose last run before and first
// run after are at two different commits. A change between two runs of one commit (or of runs
// that name no commit) is the machine's doing, never a commit's; those newer than the chosen one
// are counted in passed_over, so that the caller can say so.
struct BisectableSlowdown {
  const CaseChange* change = nullptr;  // into the vector given; null when there is none
  int passed_over = 0;
};
BisectableSlowdown newest_bisectable_slowdown(const std::vector<CaseChange>& changes);

}  // namespace attnprof::store
