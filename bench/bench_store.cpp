// bench_store: how fast the history store writes and reads, and how big it grows.
//   ninja -C build bench_store && build/bench/bench_store [--history-runs N] [--dir DIR]
// Figures: (1) writing one run of 100 cases x 1,000 samples (one transaction) and loading it
// back; (2) the database size per such run; (3) one case's history over 10,000 runs (history
// query, newest 100, change-point detection over the whole series). Not a test: run on purpose.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "harness/store/changes.h"
#include "harness/store/database.h"
#include "harness/store/history.h"

using namespace attnprof;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// CPU time of this process: on a shared build machine wall time mostly measures the neighbours.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

core::Run make_run(int cases, int samples, std::int64_t started, std::mt19937& rng,
                   double level = 50'000) {
  std::lognormal_distribution<double> noise(0, 0.02);
  core::Run run;
  run.git_commit = fmt::format("{:040x}", started);
  run.git_branch = "main";
  run.started_ns = started;
  run.ended_ns = started + 1;
  run.env.fields = {{"cpu.model", "Bench CPU"}, {"device.name", "cpu"}, {"cpu.threads", "8"}};
  for (int c = 0; c < cases; ++c) {
    core::CaseResult cr;
    cr.spec.key = fmt::format("bench-model/prefill/b{}-s{}-bf16-causal/sdpa.flash", 1 + c % 4,
                              128 << (c / 4));
    cr.spec.kernel = "sdpa.flash";
    cr.spec.suite = "bench-model";
    for (int s = 0; s < samples; ++s)
      cr.samples.push_back(
          {static_cast<std::int64_t>(level * noise(rng)), started + s * 1000, 1980.0, false});
    std::vector<double> ns;
    for (const auto& s : cr.samples) ns.push_back(static_cast<double>(s.ns));
    cr.summary.n = samples;
    cr.summary.median_ns = median(ns);
    cr.summary.mean_ns = cr.summary.median_ns;
    cr.metrics = {{"throughput.tflops", 312.5}, {"bandwidth.achieved_gbps", 2900.0}};
    for (int op = 0; op < 6; ++op) {
      core::CostRow row;
      row.op = fmt::format("aten::op{}", op);
      row.calls = 1;
      row.device_self_ns = 1000.0 * op;
      row.kernels = {{"kernel", 1}};
      cr.cost.push_back(row);
    }
    run.cases.push_back(std::move(cr));
  }
  return run;
}

std::uintmax_t db_bytes(const std::string& path) {
  std::uintmax_t n = 0;
  for (const char* suffix : {"", "-wal"}) {
    std::error_code ec;
    auto s = std::filesystem::file_size(path + suffix, ec);
    if (!ec) n += s;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  int history_runs = 10'000;
  std::string dir = std::filesystem::temp_directory_path().string();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--history-runs")) history_runs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
  }
  std::mt19937 rng(42);
  const std::string big = fmt::format("{}/bench_store_big_{}.db", dir, getpid());
  const std::string hist = fmt::format("{}/bench_store_hist_{}.db", dir, getpid());

  // (1) + (2): runs of 100 cases x 1,000 samples.
  {
    auto db = store::Database::open(big);
    std::vector<double> write_ms, load_ms, write_cpu, load_cpu;
    std::string id;
    const int reps = 5;
    for (int r = 0; r < reps; ++r) {
      auto run = make_run(100, 1000, 1'000'000 + r, rng);
      auto t = Clock::now();
      double c = cpu_ms();
      id = db.write_run(run);
      write_ms.push_back(ms_since(t));
      write_cpu.push_back(cpu_ms() - c);
      t = Clock::now();
      c = cpu_ms();
      auto back = db.load_run(id);
      load_ms.push_back(ms_since(t));
      load_cpu.push_back(cpu_ms() - c);
      if (!back || back->cases.size() != 100) return 1;
    }
    db.connection().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const double bytes = static_cast<double>(db_bytes(big)) / reps;
    fmt::print(
        "write one run, 100 cases x 1,000 samples: median {:.0f} ms wall, {:.0f} ms CPU, of {} "
        "({:.2f} M samples/s wall)\n",
        median(write_ms), median(write_cpu), reps, 100'000 / median(write_ms) / 1e3);
    fmt::print("load that run back (every sample):        median {:.0f} ms wall, {:.0f} ms CPU\n",
               median(load_ms), median(load_cpu));
    fmt::print("database size per such run:               {:.2f} MB ({:.1f} bytes per sample)\n",
               bytes / 1e6, bytes / 100'000);
  }

  // (3): one case's history over N runs (each run: 4 cases x 10 samples, a 10% step at 70%).
  {
    auto db = store::Database::open(hist);
    auto t = Clock::now();
    for (int r = 0; r < history_runs; ++r)
      db.write_run(
          make_run(4, 10, 1'000'000'000LL * r, rng, r < history_runs * 7 / 10 ? 50e3 : 55e3));
    const double fill_ms = ms_since(t);  // wall: includes the disk
    db.connection().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    fmt::print(
        "\nhistory DB: {} runs x 4 cases x 10 samples written in {:.1f} s ({:.2f} ms/run), "
        "{:.2f} KB per run\n",
        history_runs, fill_ms / 1e3, fill_ms / history_runs,
        static_cast<double>(db_bytes(hist)) / history_runs / 1e3);
    const std::string key = "bench-model/prefill/b2-s128-bf16-causal/sdpa.flash";
    std::vector<double> q_ms, last_ms, q_cpu, last_cpu;
    std::size_t rows = 0;
    for (int r = 0; r < 5; ++r) {
      t = Clock::now();
      double c = cpu_ms();
      rows = store::history(db, {.case_glob = key, .branch = "main"}).size();
      q_ms.push_back(ms_since(t));
      q_cpu.push_back(cpu_ms() - c);
      t = Clock::now();
      c = cpu_ms();
      store::history(db, {.case_glob = key, .branch = "main", .last = 100});
      last_ms.push_back(ms_since(t));
      last_cpu.push_back(cpu_ms() - c);
    }
    fmt::print("one case's history ({} rows):  median {:.1f} ms wall, {:.1f} ms CPU\n", rows,
               median(q_ms), median(q_cpu));
    fmt::print("same, newest 100 only (trend):   median {:.1f} ms wall, {:.1f} ms CPU\n",
               median(last_ms), median(last_cpu));
    t = Clock::now();
    const double c = cpu_ms();
    auto changes = store::find_changes(db, {.case_glob = key, .branch = "main"});
    fmt::print("change points over those {} runs: {:.0f} ms wall, {:.0f} ms CPU, {} found", rows,
               ms_since(t), cpu_ms() - c, changes.size());
    for (const auto& c : changes)
      fmt::print(" (at run {}, {:+.1f}%)", c.point.index, 100 * c.point.relative_change);
    fmt::print("\n");
  }
  if (getenv("BENCH_KEEP")) return 0;
  std::filesystem::remove(big);
  std::filesystem::remove(hist);
  for (const char* s : {"-wal", "-shm"}) {
    std::filesystem::remove(big + s);
    std::filesystem::remove(hist + s);
  }
  return 0;
}
