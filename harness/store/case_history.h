// Cases' histories as a report draws them: its medians and intervals over runs in one
// environment, its change points and the annotations that apply to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/stability.h"
#include "harness/store/changes.h"
#include "harness/store/database.h"

namespace attnprof::store {

struct HistoryPoint {
  std::string run_id, commit, branch;
  std::int64_t started_ns = 0;
  double median_ns = 0, ci_low_ns = 0, ci_high_ns = 0;  // interval 0: not recorded
  // What the worker stored of a busy machine (core/stability.h): the share of descheduled
  // samples and how far they moved the median, the share of throttled ones, other processes on
  // the GPU; each "not recorded" where the run did not store it.
  core::StabilityFigures stability;
};

// One case's history in one environment, oldest first: what `attnprof report --case` draws.
struct CaseHistory {
  std::string key, env_fingerprint;
  std::vector<HistoryPoint> points;
  std::vector<CaseChange> changes;  // point.index indexes `points`
  std::vector<Annotation> annotations;
};

// The most cases one history report draws; a glob matching more is refused with its matches.
inline constexpr std::size_t kMaxHistoryCases = 50;

// The history of every case matching `glob` (a key is a glob that matches itself), in key order:
// each one's medians and their intervals on `branch` (empty: any) in the environment whose
// fingerprint starts with `env` (empty: the newest run's environment, one for all cases), its
// change points and the annotations whose glob matches it. util::InputError when no case has
// history there, or when more than kMaxHistoryCases match (the message names them).
std::vector<CaseHistory> case_histories(Database& db, const std::string& glob,
                                        const std::string& branch = {},
                                        const std::string& env = {});

}  // namespace attnprof::store
