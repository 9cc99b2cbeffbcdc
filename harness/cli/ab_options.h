// attnprof ab's command line: its options, and what they make of the gate and the session
// (checked before any worker starts).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/ab/session.h"
#include "harness/cli/run_metadata.h"
#include "harness/cli/verdict_output.h"
#include "harness/gate/compare.h"

namespace attnprof::cli {

struct AbArgs {
  std::string base, head;
  std::vector<std::string> base_args, head_args, env;
  std::vector<std::string> files, case_globs;
  std::optional<std::string> shard;
  std::string db, tolerance;
  ReportFiles reports;
  gate::FindingRules findings;
  bool strict = false, no_trace = false, accept_from_commit = false, confirm = true;
  bool layout_pad = true;
  bool share_cpus = true;
  double batch_ms = 25, case_timeout_s = 0, budget_scale = 1, time_limit_s = 0;
  int max_rounds = 16, diff_rows = 8, min_pairs = 3, max_pairs = 12;
  std::string base_commit;
  RunMetadata meta;
};

void add_ab_options(CLI::App& sub, AbArgs& a);
// What a session measures and how, without its two sides and reports: what bisect's steps take
// too (scenarios, --env, --db, --case, --shard, --tolerance, rounds, pairs, --time-limit, ...).
void add_ab_session_options(CLI::App& sub, AbArgs& a);

// The gate's options; util::InputError naming the option when a session option is out of range.
gate::Options gate_options(const AbArgs& a);
ab::SessionOptions session_options(const AbArgs& a, const gate::Options& opts);

// What an A/B session left: its stored pair and the verdicts it was judged by.
struct AbOutcome {
  std::string pair_id;
  std::vector<gate::CaseVerdict> verdicts;
  double seconds = 0;  // the whole session, every pair of workers' start included
};
// attnprof ab with these arguments (cmd_ab.cpp): measures, stores and reports as ab does; the
// exit code, and what the session left in `outcome` when one is given.
int run_ab(const AbArgs& a, AbOutcome* outcome = nullptr);

}  // namespace attnprof::cli
