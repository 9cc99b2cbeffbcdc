// attnprof run's session (run_session.h): begin or resume a stored run, run and store its
// cases one by one on a supervised worker, finish it.
#include "harness/session/run_session.h"

#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <set>

#include "harness/core/clock.h"
#include "harness/core/stability.h"
#include "harness/report/progress.h"
#include "harness/util/error.h"

namespace attnprof::session {
namespace {

core::CaseResult skipped(const core::Case& c, std::string why) {
  core::CaseResult r;
  r.spec = c;
  r.status = core::CaseStatus::skipped;
  r.message = std::move(why);
  return r;
}

// The worker's refusal of a case whose GPU another process shares (measure::GpuSharedError).
bool gpu_refused(const core::CaseResult& r) {
  const auto it = r.metrics.find(core::kOtherProcessesMetric);
  return r.status == core::CaseStatus::error && it != r.metrics.end() && it->second > 0;
}

}  // namespace

core::Environment run_environment(env::Description env, const std::vector<core::CaseResult>& done,
                                  const core::Case& first) {
  std::set<int> threads;
  for (const auto& r : done)
    if (r.status == core::CaseStatus::ok) threads.insert(r.spec.hardware.threads);
  if (threads.size() == 1) env.torch_threads = *threads.begin();
  core::Environment e =
      env::fingerprint_for(env, first.hardware.device, first.hardware.clock_policy);
  if (threads.size() > 1 && e.fields.count("cpu.threads")) e.fields["cpu.threads"] = "mixed";
  return e;
}

OpenRun begin_run(store::Database& db, core::Run run, const env::Description& env,
                  const core::Case& first) {
  run.started_ns = core::epoch_ns();
  run.env = run_environment(env, {}, first);
  run.id = db.begin_run(run);
  return {std::move(run), {}};
}

OpenRun resume_run(store::Database& db, const std::string& ref, std::vector<core::Case>& cases) {
  const auto id = ref == "latest" ? db.latest_incomplete_run() : std::optional<std::string>(ref);
  auto stored = id ? db.load_run(*id) : std::nullopt;
  if (!stored)
    throw util::InputError(util::Diagnostic{
        "--resume", 0, 0,
        ref == "latest" ? fmt::format("{} holds no incomplete run to resume", db.path())
                        : fmt::format("no run \"{}\" in {}", ref, db.path())});
  if (stored->status != "incomplete")
    throw util::InputError(util::Diagnostic{
        "--resume", 0, 0, fmt::format("run {} is {}, not incomplete", stored->id, stored->status)});
  OpenRun open{std::move(*stored), {}};
  std::set<std::string> have;
  for (auto& r : open.run.cases) {
    have.insert(r.spec.key);
    open.done.push_back(std::move(r));
  }
  open.run.cases.clear();
  const std::size_t before = cases.size();
  std::erase_if(cases, [&](const core::Case& c) { return have.count(c.key) > 0; });
  fmt::print("attnprof: resuming run {}: {} of {} case(s) stored, {} to run\n", open.run.id,
             before - cases.size(), before, cases.size());
  return open;
}

core::Run run_cases(store::Database& db, worker::Supervisor& worker, OpenRun open,
                    const std::vector<core::Case>& cases, const CaseOptions& options) {
  const env::Description& env = worker.described().env;
  fmt::print("attnprof: {} case(s); {}{}\n", cases.size(),
             env.devices.empty() ? "CPU only (" + env.cuda_status + ")"
                                 : fmt::format("{} CUDA device(s)", env.devices.size()),
             options.note.empty() ? "" : "; " + options.note);
  std::fflush(stdout);
  report::Progress progress(static_cast<int>(cases.size()));
  std::size_t ran = 0;
  for (const core::Case& c : cases) {
    progress.start(c.key);
    const std::optional<std::string> why =
        options.cannot_run ? options.cannot_run(c) : std::nullopt;
    core::CaseResult r =
        why ? skipped(c, *why)
            : worker.run_case(c, options.trace, worker::case_timeout(c, options.case_timeout_s));
    // The worker's own output before the case's line, never inside it.
    for (const auto& l : worker.take_stderr()) progress.message("  worker: " + l);
    progress.finish(c.key, r.status == core::CaseStatus::ok
                               ? fmt::format("ok ({} samples)", r.summary.n)
                               : fmt::format("{}: {}", core::to_string(r.status),
                                             r.message.substr(0, r.message.find('\n'))));
    if (options.stop_when_gpu_shared && gpu_refused(r)) {
      progress.done();
      const std::size_t left = cases.size() - ran;
      fmt::print(
          "attnprof: --require-idle-gpu stopped the run at case {} of {}: {} left unrun, the "
          "run {} stays incomplete; `attnprof run` with the same scenarios and `--resume {}` "
          "runs them once the GPU is idle\n",
          ran + 1, cases.size(), left, open.run.id.substr(0, 8), open.run.id.substr(0, 8));
      core::Run run = std::move(open.run);
      run.status = "incomplete";
      run.cases = std::move(open.done);
      return run;
    }
    db.write_case(open.run.id, r);
    open.done.push_back(std::move(r));
    ++ran;
  }
  progress.done();
  core::Run run = std::move(open.run);
  run.ended_ns = core::epoch_ns();
  run.status = "complete";
  const core::Case& first = open.done.empty() ? cases.front() : open.done.front().spec;
  run.env = run_environment(env, open.done, first);
  db.finish_run(run.id, run.ended_ns, run.env);
  run.cases = std::move(open.done);
  return run;
}

int run_exit_code(const core::Run& run) {
  bool failed = false, errored = run.status == "incomplete";
  for (const auto& r : run.cases) {
    failed |= r.status == core::CaseStatus::failed;
    errored |= r.status == core::CaseStatus::error;
  }
  if (failed) return util::exit_gate_failed;
  return errored ? util::exit_environment : util::exit_pass;
}

}  // namespace attnprof::session
