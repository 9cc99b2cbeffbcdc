// attnprof run [SCENARIO...]: load and validate the scenarios (the embedded smoke suite when
// none is given), then the run session (session/run_session.h: every case checked, measured and
// traced in attnprof-worker, each stored as it finishes; `--resume RUN` runs what a killed run
// lacks), then the results table. A worker that crashes, hangs past the case's deadline or
// reports a poisoned CUDA context ends that case as an error; a fresh worker runs the next.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "harness/cli/bounds.h"
#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/cli/run_metadata.h"
#include "harness/report/results.h"
#include "harness/session/run_session.h"
#include "harness/store/database.h"
#include "harness/util/error.h"
#include "harness/worker/supervisor.h"
#include "harness/worker/wait_policy.h"

namespace attnprof::cli {
namespace {

struct RunArgs {
  std::vector<std::string> files;
  std::string db;
  std::vector<std::string> case_globs;
  std::vector<std::string> plugins;
  std::optional<std::string> shard;
  int threads = 0;
  bool no_trace = false;
  bool require_hardware = false;
  int cost_rows = 0;
  std::string sort, perfetto_dir;
  bool counters = false, wide = false, require_idle_gpu = false;
  std::string resume;
  std::string worker;
  double case_timeout_s = 0;
  RunMetadata meta;
};

// The worker's arguments, with the workers' OpenMP wait policy (worker/wait_policy.h) set in its
// environment; `wait_policy_chosen` says whether the user had chosen one.
std::vector<std::string> worker_args(const RunArgs& a, bool& wait_policy_chosen) {
  std::vector<std::string> env;
  wait_policy_chosen = worker::apply_wait_policy(env);
  std::vector<std::string> out;
  for (const auto& e : env) out.push_back("--env=" + e);
  for (const auto& p : a.plugins) out.push_back("--plugin=" + p);
  if (a.threads > 0) out.push_back(fmt::format("--threads={}", a.threads));
  if (a.no_trace) out.push_back("--no-trace");
  if (a.require_hardware) out.push_back("--require-hardware");
  if (!a.perfetto_dir.empty()) out.push_back("--perfetto=" + a.perfetto_dir);
  if (a.counters) out.push_back("--counters");
  if (a.require_idle_gpu) out.push_back("--require-idle-gpu");
  return out;
}

int run(const RunArgs& a) {
  if (!a.sort.empty()) sort_or_bad_input({}, a.sort, 1);  // a bad key fails before the run
  bool wait_policy_chosen = false;
  std::vector<std::string> args = worker_args(a, wait_policy_chosen);
  worker::Supervisor sup(worker::Spawn{
      a.worker.empty() ? worker::default_worker() : worker::resolve_worker(a.worker, "--worker"),
      std::move(args), "worker"});
  const worker::Described& described = sup.described();
  std::vector<core::Case> cases = load_cases(a.files, described.kernels, a.shard, a.case_globs);
  check_plugin_ops(cases, described);
  if (auto missing = missing_packages(cases); !missing.empty())
    throw util::InputError(std::move(missing));

  // Open the history before spending minutes on measurements: a bad --db fails fast (exit 3).
  store::Database db = open_history(a.db);
  if (!a.perfetto_dir.empty() && mkdir(a.perfetto_dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw util::EnvironmentError(fmt::format("{}: cannot create the Perfetto folder: {}",
                                             a.perfetto_dir, std::strerror(errno)));
  session::OpenRun open;
  if (!a.resume.empty()) {
    open = session::resume_run(db, a.resume, cases);
  } else {
    core::Run fresh;
    a.meta.fill(fresh);
    open = session::begin_run(db, std::move(fresh), described.env, cases.front());
  }
  std::vector<double> devices_gib;
  for (const auto& d : described.env.devices) devices_gib.push_back(d.memory_gib);
  session::CaseOptions options;
  options.trace = !a.no_trace;
  options.case_timeout_s = a.case_timeout_s;
  options.note = worker::wait_policy_note(wait_policy_chosen);
  options.cannot_run = [devices_gib](const core::Case& c) {
    return too_big_for_machine(c, devices_gib);
  };
  options.stop_when_gpu_shared = a.require_idle_gpu;
  const core::Run run = session::run_cases(db, sup, std::move(open), cases, options);

  fmt::print("\n{}", report::results_table(run, table_width(a.wide)));
  for (const auto& r : run.cases)
    if (!r.cost.empty() && a.cost_rows > 0)
      fmt::print("{}", case_cost_text(r, a.sort, a.cost_rows, table_width(a.wide)));
  if (a.cost_rows <= 0)
    fmt::print("\ncost matrices: attnprof show {} --case KEY (or run --cost-rows N)\n",
               run.id.substr(0, 8));
  fmt::print("\n{}\nrun {} stored in {}{}\n", report::status_counts(run, table_width(a.wide)),
             run.id, a.db, run.status == "incomplete" ? " (incomplete)" : "");
  return session::run_exit_code(run);
}

}  // namespace

Action setup_run(CLI::App& sub) {
  auto a = std::make_shared<RunArgs>();
  sub.add_option("scenarios", a->files, "Scenario files (default: the embedded smoke suite)");
  add_db_option(sub, a->db);
  sub.add_option("--case", a->case_globs, "Only cases whose key matches this glob")
      ->check(glob_check());
  sub.add_option("--plugin", a->plugins,
                 "Load a shared library of TORCH_LIBRARY ops (kernels named op:ns::name)");
  sub.add_option("--shard", a->shard, "Run shard i of n (e.g. 2/4): a stable, cost-balanced split");
  sub.add_option("--threads", a->threads,
                 "CPU intra-op threads, 1 to 4 x the CPUs (default: the scenario's, else "
                 "LibTorch's)")
      ->check(thread_bound());
  sub.add_flag("--no-trace", a->no_trace, "Skip the traced pass and the cost matrix");
  sub.add_flag("--require-hardware", a->require_hardware,
               "Fail (not skip) cases whose device or GPU pattern this machine does not match");
  sub.add_flag("--require-idle-gpu", a->require_idle_gpu,
               "Stop the run with an error (exit 3), the case unmeasured, when another process "
               "is using its GPU; --resume runs the rest later");
  sub.add_option("--cost-rows", a->cost_rows,
                 "Print each case's cost matrix, this many rows (default 0: none; `attnprof "
                 "show` prints a stored one)");
  sub.add_option("--sort", a->sort, "Cost-matrix column to sort by (see `attnprof show --help`)");
  add_wide_option(sub, a->wide);
  sub.add_flag(
      "--counters", a->counters,
      "GPU hardware counters (DRAM bytes) in a separate pass through CUPTI's range "
      "profiler; needs profiling permission (NVreg_RestrictProfilingToAdminUsers=0 or root)");
  sub.add_option(
      "--perfetto", a->perfetto_dir,
      "Write each case's traced pass as a Perfetto/Chrome trace (JSON) into this folder");
  sub.add_option("--resume", a->resume,
                 "Continue an incomplete run (its id, or latest): run only the cases it lacks "
                 "(give the same scenarios and filters)");
  sub.add_option("--worker", a->worker,
                 "The attnprof-worker to run kernels in, or its build folder (default: the one "
                 "beside attnprof)");
  sub.add_option("--case-timeout", a->case_timeout_s,
                 "Seconds a case may take before its worker counts as hung and is replaced "
                 "(default: 60 + 3 x the case's warm-up and time budget)")
      ->check(case_timeout_bound());
  a->meta.add_options(sub);
  return [a] { return run(*a); };
}

}  // namespace attnprof::cli
