// attnprof run [SCENARIO...]: load and validate the scenarios (the embedded smoke suite when
// none is given), run every case (check, measure, trace), print the results and each case's
// cost matrix, and store the run in the SQLite history in one transaction.
#include <fmt/format.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

#include "harness/cli/commands.h"
#include "harness/cli/run_metadata.h"
#include "harness/env/environment.h"
#include "harness/kernel/plugin.h"
#include "harness/kernel/registry.h"
#include "harness/report/results.h"
#include "harness/runner/runner.h"
#include "harness/scenario/scenario.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {
namespace {

struct RunArgs {
  std::vector<std::string> files;
  std::string db;
  std::vector<std::string> case_globs;
  std::vector<std::string> plugins;
  std::string shard;
  int threads = 0;
  bool no_trace = false;
  bool require_hardware = false;
  int cost_rows = 8;
  std::string sort;
  std::string perfetto_dir;
  bool counters = false;
  RunMetadata meta;
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int run(const RunArgs& a) {
  for (const auto& p : a.plugins) kernel::load_plugin(p);
  scenario::LoadOptions lo;
  lo.kernels = kernel::registry().names();
  scenario::Suite suite = a.files.empty() ? scenario::load_text(scenario::embedded_smoke_suite(),
                                                                scenario::smoke_suite_name(), lo)
                                          : scenario::load(a.files, lo);
  std::vector<core::Case> cases = suite.cases;
  if (!a.shard.empty()) {
    auto [i, n] = scenario::parse_shard(a.shard);
    cases = scenario::shard(cases, i, n);
  }
  if (!a.case_globs.empty()) {
    std::erase_if(cases, [&](const core::Case& c) {
      for (const auto& g : a.case_globs)
        if (fnmatch(g.c_str(), c.key.c_str(), 0) == 0) return false;
      return true;
    });
  }

  if (cases.empty())
    throw util::InputError(
        util::Diagnostic{a.case_globs.empty() ? "--shard" : "--case", 0, 0,
                         "no case to run: the filters leave none of the suite's " +
                             std::to_string(suite.cases.size()) + " cases"});

  // Open the history before spending minutes on measurements: a bad --db fails fast (exit 3).
  store::Database db = store::Database::open(a.db);

  env::Description env = env::describe();
  if (!a.sort.empty()) sort_or_bad_input({}, a.sort, 1);  // a bad key fails before the run
  if (!a.perfetto_dir.empty() && mkdir(a.perfetto_dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw util::EnvironmentError(fmt::format("{}: cannot create the Perfetto folder: {}",
                                             a.perfetto_dir, std::strerror(errno)));
  runner::Runner runner(env, {.trace = !a.no_trace,
                              .require_hardware = a.require_hardware,
                              .threads = a.threads,
                              .perfetto_dir = a.perfetto_dir,
                              .hardware_counters = a.counters});
  core::Run run;
  a.meta.fill(run);
  run.started_ns = now_ns();
  fmt::print("attnprof: {} case(s); {}\n", cases.size(),
             env.devices.empty() ? "CPU only (" + env.cuda_status + ")"
                                 : fmt::format("{} CUDA device(s)", env.devices.size()));
  for (size_t i = 0; i < cases.size(); ++i) {
    const core::Case& c = cases[i];
    fmt::print("[{}/{}] {} ... ", i + 1, cases.size(), c.key);
    std::fflush(stdout);
    core::CaseResult r = runner.run(c);
    fmt::print("{}\n", r.status == core::CaseStatus::ok
                           ? fmt::format("ok ({} samples)", r.summary.n)
                           : fmt::format("{}: {}", core::to_string(r.status), r.message));
    run.cases.push_back(std::move(r));
  }
  run.ended_ns = now_ns();
  // The run's environment is the device of its cases (a suite targets one kind of hardware),
  // with the CPU thread count the cases actually ran with.
  std::set<int> threads;
  for (const auto& r : run.cases)
    if (r.status == core::CaseStatus::ok) threads.insert(r.spec.hardware.threads);
  if (threads.size() == 1) env.torch_threads = *threads.begin();
  run.env =
      env::fingerprint_for(env, cases.front().hardware.device, cases.front().hardware.clock_policy);
  if (threads.size() > 1) run.env.fields["cpu.threads"] = "mixed";

  fmt::print("\n{}", report::results_table(run));
  for (const auto& r : run.cases) {
    if (r.cost.empty() || a.cost_rows <= 0) continue;
    fmt::print("\ncost matrix: {}\n{}", r.spec.key, sort_or_bad_input(r.cost, a.sort, a.cost_rows));
  }
  const std::string id = db.write_run(run);
  fmt::print("\n{}\nrun {} stored in {}\n", report::status_counts(run), id, a.db);

  bool failed = false, errored = false;
  for (const auto& r : run.cases) {
    failed |= r.status == core::CaseStatus::failed;
    errored |= r.status == core::CaseStatus::error;
  }
  if (failed) return util::exit_gate_failed;
  return errored ? util::exit_environment : util::exit_pass;
}

}  // namespace

Action setup_run(CLI::App& sub) {
  auto a = std::make_shared<RunArgs>();
  sub.add_option("scenarios", a->files, "Scenario files (default: the embedded smoke suite)");
  add_db_option(sub, a->db);
  sub.add_option("--case", a->case_globs, "Only cases whose key matches this glob (repeatable)");
  sub.add_option("--plugin", a->plugins,
                 "Load a shared library of TORCH_LIBRARY ops (kernels named op:ns::name)");
  sub.add_option("--shard", a->shard, "Run shard i of n (e.g. 2/4): a stable, cost-balanced split");
  sub.add_option("--threads", a->threads,
                 "CPU intra-op threads (default: the scenario's, else LibTorch's)");
  sub.add_flag("--no-trace", a->no_trace, "Skip the traced pass and the cost matrix");
  sub.add_flag("--require-hardware", a->require_hardware,
               "Fail (not skip) cases whose device or GPU pattern this machine does not match");
  sub.add_option("--cost-rows", a->cost_rows, "Rows of each case's cost matrix to print (0: none)");
  sub.add_option("--sort", a->sort, "Cost-matrix column to sort by (see `attnprof show --help`)");
  sub.add_flag(
      "--counters", a->counters,
      "GPU hardware counters (DRAM bytes) in a separate pass through CUPTI's range "
      "profiler; needs profiling permission (NVreg_RestrictProfilingToAdminUsers=0 or root)");
  sub.add_option(
      "--perfetto", a->perfetto_dir,
      "Write each case's traced pass as a Perfetto/Chrome trace (JSON) into this folder");
  a->meta.add_options(sub);
  return [a] { return run(*a); };
}

}  // namespace attnprof::cli
