// attnprof bisect's pieces on the CLI's side (cmd_bisect.cpp runs them): its options, the
// range a change point names, one step's paired A/B, and the table of steps.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "harness/bisect/bisection.h"
#include "harness/bisect/trees.h"
#include "harness/cli/ab_options.h"

namespace attnprof::cli {

struct BisectArgs {
  std::string good, bad = "HEAD", commits, from_change, repo = ".", work;
  std::string build_command, plugins, worker_args;  // the CI gate's inputs (docs/ci.md)
  AbArgs ab;                                        // each step's session and gate
};
void add_bisect_options(CLI::App& sub, BisectArgs& o);

// --good and --bad from --commits GOOD..BAD, or from the newest slowdown --from-change's case
// shows in the history (`attnprof changes`), which also becomes --case when none is given.
// util::InputError naming the option when they disagree or the history has no such change.
void resolve_range(BisectArgs& o);

struct Step {
  int number = 0;
  bisect::Commit commit;
  bisect::StepJudgement judgement;
  std::string pair_id;
  double ab_seconds = 0, build_seconds = 0;
  bool reused = false;
};

// One step: the commit's build against the good commit's, measured as `attnprof ab` measures
// them (and stored as its A/B pair, on branch attnprof-bisect so that main's history is not
// touched), judged by bisect::judge_step.
Step run_step(const BisectArgs& o, const bisect::Built& good, const bisect::Commit& good_commit,
              const bisect::Built& head, const bisect::Commit& commit);

// "ratio 2.013 [1.962, 2.071] regression -> bad" and the whole table of steps.
std::string step_line(const Step& s);
std::string steps_table(const std::vector<Step>& steps);

}  // namespace attnprof::cli
