// attnprof ab's measurement: one case on two workers (base and head), interleaved.
//
// Why: on a shared machine (a 2-core CI runner, a GPU fleet where every job lands on another
// card) a case's median moves by tens of percent between runs, far more than the regressions a
// gate must catch. Within a few tens of milliseconds it barely moves. So both sides measure in
// rounds: each round, each side takes a short batch of samples (batch_ms of work), the two
// batches back to back, and the per-round ratio head/base cancels what the machine was doing.
// The order within a round is randomized in ABBA pairs (a random order for round 2k, the
// reverse for round 2k+1), so an advantage of going first or second (a warm cache, a clock
// ramp) cancels too instead of posing as a difference. On a GPU both workers use the same
// device, one at a time: only one side is ever measuring.
//
// Per case and pair of workers: both sides prepare (inputs, the correctness check against
// sdpa.math, warm-up); a case that is not ready on a side ends there with that side's status.
// Then one unrecorded burn-in round (the second side's warm-up has just evicted the first
// side's caches), then rounds until max_rounds, the case's time budget, or `decided` ends
// them. Finally both sides finish: summaries of all their batch samples, metrics, and the
// traced pass for the cost matrix. A session (session.h) runs this on several pairs of fresh
// workers per case: the rounds of one pair share that pair's bias.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/worker/supervisor.h"

namespace attnprof::ab {

struct Options {
  double batch_ms = 25;         // work per side per round ...
  int min_calls = 8;            // ... and at least this many calls: the round judges each
                                // batch's lower quartile, which needs a few calls to stand on
  int max_rounds = 128;         // a case's cap (with its time budget)
  double budget_scale = 1.0;    // the case's measure.time_budget_s times this caps its rounds
  double timeout_s = 0;         // per request; 0: worker::case_timeout
  bool trace = true;            // traced pass on both sides after the rounds
  int first_round = 0;          // number of the first recorded round (a later pair of workers
                                // continues the numbering of the earlier ones)
  int pass = 0;                 // which pair of workers this is, for every round it records
  std::uint64_t seed = 0x6162;  // the round order; mixed with the case key and the pass
  // After each recorded round: true to stop (the interval decides). The rounds so far.
  std::function<bool(const std::vector<core::AbRound>&, const core::Case&)> decided;
};

struct CaseOutcome {
  core::CaseResult base, head;  // final results; samples are every batch's
  std::vector<core::AbRound> rounds;
  std::string stop_reason;  // "decided", "time budget", "max rounds", or why a side ended
  double seconds = 0;       // wall time from prepare to finish
};

CaseOutcome run_case(worker::Supervisor& base, worker::Supervisor& head, const core::Case& c,
                     const Options& options);

}  // namespace attnprof::ab
