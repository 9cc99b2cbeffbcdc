// A baseline built from the stored history instead of a committed file (`attnprof compare
// --baseline history`): for each case of the judged run, the medians of its newest earlier runs
// on the baseline branch, in the same environment, within the current stable segment.
//
//   environment  the judged run's fingerprint, exactly: never compare across machines
//   branch       HistoryOptions::branch (main): what a PR merges into, not the PR's own runs
//   time         runs that started before the judged run (the judged run never judges itself)
//   segment      runs at or after the newest boundary matching the case: a `reset` annotation,
//                or an `accept` of a run on the baseline branch (that run is the new normal).
//                A boundary naming a run starts at that run; one without a run starts at the
//                annotation's creation time.
//   exclusions   cases of a run that an `ignore` annotation names (with that run) stay out;
//                so do earlier runs that timed a GPU case differently than the judged run
//                (timing_mode.h: CUDA-graph batches against cold calls, CUPTI against events)
//                or under another GPU clock policy (clock_policy.h: applications clocks,
//                persistence mode), and the verdict's reason says how many; and, unless
//                include_unstable, runs whose case was unstable (core/stability.h: the
//                samples a busy machine descheduled moved the case's median beyond its
//                interval, or its GPU ran throttled or was shared)
//   window       the newest `window` runs of the case (30); fewer than `min_runs` (5): the case
//                has no entry, and Baseline::notes says why (its verdict is `new`)
//   findings     what the case ran and how accurate it was (findings.h) are the newest kept
//                run's: the branch as it is now, not a vote over the window
//
// Why run medians rather than pooled samples: a pooled sample of 30 runs has thousands of
// values, so its median's interval is tiny and a judged run sitting 1% off (ordinary run-to-run
// drift, the gate's main false-alarm cause in A/A calibration) looks significant. One median per
// run keeps the run as the unit, so the spread between runs is what the verdict is tested
// against (compare.h, "History baselines"). Renamed cases: the series of the key and of its
// aliases are joined. Cases only in history (not in the judged run) get no entry: a shard or
// a partial run would otherwise see every other case as `missing`; committed baseline files
// are the way to require a case.
#pragma once

#include <string>

#include "harness/core/types.h"
#include "harness/gate/baseline.h"
#include "harness/store/database.h"

namespace attnprof::gate {

struct HistoryOptions {
  std::string branch = "main";
  int window = 30;   // newest runs per case
  int min_runs = 5;  // below this a case has no baseline; at least 2 (a spread needs two)
  bool include_unstable = false;  // keep runs whose case was unstable (--include-unstable)
};

// util::InputError for options out of range ("--window" / "--min-runs" named); store errors
// propagate (util::EnvironmentError).
Baseline history_baseline(store::Database& db, const core::Run& judged,
                          const HistoryOptions& options = {});

// "history of main (newest 30 runs, min 5, environment 0123abcd)": for reports.
std::string describe(const HistoryOptions& options, const std::string& fingerprint);

}  // namespace attnprof::gate
