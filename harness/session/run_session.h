// The session of `attnprof run`: a stored run begun (or an incomplete one resumed), every case
// run on a supervised worker and stored as it finishes, then the run finished. The run is
// "incomplete" until its last case is stored, so a run killed half-way keeps what it finished
// and a resume runs only what it lacks. The command line (cli/cmd_run.cpp) parses, calls this,
// and prints.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/env/environment.h"
#include "harness/store/database.h"
#include "harness/worker/supervisor.h"

namespace attnprof::session {

// A run under way: the stored run (id set) and the cases it already holds.
struct OpenRun {
  core::Run run;
  std::vector<core::CaseResult> done;
};

// Stores `run` (its metadata filled by the caller) as a new incomplete run, its environment
// that of the machine for the suite's first case.
OpenRun begin_run(store::Database& db, core::Run run, const env::Description& env,
                  const core::Case& first);

// The incomplete run `ref` ("latest" or a run id) of `db`, and `cases` less the ones it holds.
// util::InputError (naming --resume) when there is none, or it is not incomplete.
OpenRun resume_run(store::Database& db, const std::string& ref, std::vector<core::Case>& cases);

struct CaseOptions {
  bool trace = true;
  double case_timeout_s = 0;  // 0: each case's own deadline (worker::case_timeout)
  std::string note;           // for the first line, after the device (the wait policy)
  // Why a case cannot run on this machine (it needs more memory than there is), decided before
  // a worker sees it: the case is stored as skipped with that message. Empty: every case runs.
  std::function<std::optional<std::string>(const core::Case&)> cannot_run;
  // `run --require-idle-gpu`: a case the worker refused because another process shares its GPU
  // (an error with gpu.other_processes) stops the run there, failing fast. That case is not
  // stored and the run stays incomplete, so that `--resume` runs it and the rest later.
  bool stop_when_gpu_shared = false;
};

// Runs `cases` on `worker`, one at a time, with a progress line; stores each as it finishes,
// then finishes the run. Returns the whole run, the resumed cases first; one stopped by a shared
// GPU (CaseOptions::stop_when_gpu_shared) is returned "incomplete", with what it stored.
core::Run run_cases(store::Database& db, worker::Supervisor& worker, OpenRun open,
                    const std::vector<core::Case>& cases, const CaseOptions& options);

// The run's environment: the device of its cases (a suite targets one kind of hardware), with
// the CPU thread count the cases actually ran with ("mixed" when they differ).
core::Environment run_environment(env::Description env, const std::vector<core::CaseResult>& done,
                                  const core::Case& first);

// The run's exit code: 1 when a case failed its check, 3 when one ended in an error or the run
// stopped before its last case, else 0.
int run_exit_code(const core::Run& run);

}  // namespace attnprof::session
