// bench_store: how fast the history store writes and reads, and how big it grows.
//   ninja -C build bench_store && build/bench/bench_store [--history-runs N] [--dir DIR]
//       [--history-db FILE]   keep the history database of (3) and (4) in FILE, and reuse it
//                             when it exists (filling it takes minutes)
// Figures: (1) writing one run of 100 cases x 1,000 samples (one transaction) and loading it
// back; (2) the database size per such run; (3) over N runs (10,000) of 100 cases each: one
// case's whole history, its newest 30 (what trend and the gate read), change points over the
// whole series; (4) `compare --baseline history` for a run of those 100 cases
// (gate::history_baseline). Reads in (3) and (4) are timed against the bare SQLite statements
// they run, through the C API in the same process, and against the single window-function query
// history() ran before schema v4 (every row numbered, the newest N cut in C++), so the figures
// are ratios that a busy machine cannot fake. Not a test: run on purpose.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "harness/gate/history_baseline.h"
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
                   double level = 50'000, int cost_rows = 6) {
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
                              128 * (1 + c / 4));
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
    for (int op = 0; op < cost_rows; ++op) {
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
  std::string kept_hist;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--history-runs")) history_runs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
    if (!std::strcmp(argv[i], "--history-db")) kept_hist = argv[i + 1];
  }
  std::mt19937 rng(42);
  const std::string big = fmt::format("{}/bench_store_big_{}.db", dir, getpid());
  const std::string hist =
      kept_hist.empty() ? fmt::format("{}/bench_store_hist_{}.db", dir, getpid()) : kept_hist;

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

  // (3) and (4): N runs of 100 cases x 1 sample, no cost rows (what history reads is one row per
  // case; samples and cost rows only make the file bigger), a 10% step at 70% of the runs.
  {
    auto db = store::Database::open(hist);
    auto t = Clock::now();
    const std::int64_t present = db.connection().scalar_int("SELECT count(*) FROM runs");
    if (present != 0 && present != history_runs) {
      fmt::print(stderr, "{} holds {} runs, not {}\n", hist, present, history_runs);
      return 2;
    }
    for (int r = 0; r < history_runs && present == 0; ++r)
      db.write_run(
          make_run(100, 1, 1'000'000'000LL * r, rng, r < history_runs * 7 / 10 ? 50e3 : 55e3, 0));
    const double fill_ms = ms_since(t);  // wall: includes the disk
    db.connection().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    if (present == 0)
      fmt::print(
          "\nhistory DB: {} runs x 100 cases x 1 sample written in {:.1f} s ({:.2f} ms/run), "
          "{:.2f} KB per run\n\n",
          history_runs, fill_ms / 1e3, fill_ms / history_runs,
          static_cast<double>(db_bytes(hist)) / history_runs / 1e3);
    else
      fmt::print("\nhistory DB: {} runs x 100 cases reused from {}\n\n", history_runs, hist);
    const core::Run judged = make_run(100, 1, 1'000'000'000LL * history_runs, rng, 50e3, 0);
    const std::string fp = judged.env.fingerprint();
    const std::string key = judged.cases[5].spec.key;
    sqlite3* raw = db.connection().get();

    // The statements history() runs, written out by hand (history.cpp, read_sql): a key's
    // values newest first, walking runs in time order (trend: branch only; gate: branch and
    // environment), or reading all of the key's cases and sorting (a whole history).
    const char* select =
        "SELECT runs.id, runs.git_commit, runs.git_branch, runs.env_fingerprint, runs.started_ns, "
        "cases.kernel, cases.status, summaries.median_ns FROM ";
    const std::string where =
        " CROSS JOIN summaries WHERE cases.case_key = ?1 AND cases.run_id = runs.id AND "
        "summaries.case_id = cases.id AND runs.status = 'complete' AND runs.git_branch = 'main' "
        "AND cases.status = 'ok'";
    const std::string order = " ORDER BY runs.started_ns DESC, runs.rowid DESC LIMIT ?2";
    const std::string trend_sql = select + std::string("runs CROSS JOIN cases") + where + order;
    const std::string whole_sql = select + std::string("cases CROSS JOIN runs") + where + order;
    const std::string gate_sql = select + std::string("runs CROSS JOIN cases") + where +
                                 " AND runs.env_fingerprint = ?3" + order;
    // history() before schema v4: every matching row numbered by ROW_NUMBER(), cut in C++.
    const std::string old_sql =
        "WITH sel AS (SELECT c.id AS case_id FROM cases c JOIN runs r ON r.id = c.run_id"
        "  WHERE c.case_key GLOB ?1 AND r.git_branch = 'main' AND substr(r.env_fingerprint, 1, "
        "  length(?3)) = ?3 AND c.status = 'ok' AND r.status = 'complete'), "
        "vals AS (SELECT s.case_id, 'summary.median_ns' AS name, s.median_ns AS value FROM "
        "  summaries s JOIN sel ON sel.case_id = s.case_id) "
        "SELECT r.id, r.git_commit, r.git_branch, r.env_fingerprint, r.started_ns, c.case_key, "
        "  c.kernel, c.status, v.value, ROW_NUMBER() OVER (PARTITION BY c.case_key, v.name "
        "  ORDER BY r.started_ns DESC, r.rowid DESC) AS newest "
        "FROM vals v JOIN cases c ON c.id = v.case_id JOIN runs r ON r.id = c.run_id "
        "ORDER BY c.case_key, v.name, r.started_ns, r.rowid";

    // Steps one statement per key through the C API, copying each row out as history() does;
    // returns the rows kept.
    struct Row {
      std::string id, commit, branch, fp, kernel, status;
      std::int64_t started = 0;
      double value = 0;
    };
    auto bare = [&](const std::string& sql, const std::vector<std::string>& keys, int limit,
                    const std::string& env) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(raw, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) std::abort();
      std::vector<Row> rows;
      auto text = [&](int col) {
        return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, col)));
      };
      for (const auto& k : keys) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, k.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 2, limit);
        if (!env.empty()) sqlite3_bind_text(st, 3, env.c_str(), -1, SQLITE_TRANSIENT);
        while (sqlite3_step(st) == SQLITE_ROW)
          rows.push_back({text(0), text(1), text(2), text(3), text(5), text(6),
                          sqlite3_column_int64(st, 4), sqlite3_column_double(st, 7)});
      }
      sqlite3_finalize(st);
      return rows.size();
    };
    auto old_query = [&](const std::string& glob, int last) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(raw, old_sql.c_str(), -1, &st, nullptr) != SQLITE_OK) std::abort();
      sqlite3_bind_text(st, 1, glob.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(st, 3, fp.c_str(), -1, SQLITE_TRANSIENT);
      std::size_t kept = 0;
      while (sqlite3_step(st) == SQLITE_ROW)
        if (sqlite3_column_int64(st, 9) <= last) ++kept;
      sqlite3_finalize(st);
      return kept;
    };

    // Each timed variant runs `reps` times, interleaved with the others, so drift on a shared
    // machine hits all of them alike; medians of CPU time.
    struct Timed {
      const char* what;
      int reference;  // the bare statement it is compared with: an index into the same list
      std::function<std::size_t()> fn;
      std::vector<double> cpu, wall;
      std::size_t rows = 0;
    };
    auto race = [](std::vector<Timed>& variants, int reps) {
      for (int r = 0; r < reps; ++r)
        for (auto& v : variants) {
          const auto w = Clock::now();
          const double c = cpu_ms();
          v.rows = v.fn();
          v.cpu.push_back(cpu_ms() - c);
          v.wall.push_back(ms_since(w));
        }
      for (auto& v : variants)
        fmt::print("  {:<42} {:>8.2f} ms CPU {:>8.2f} ms wall {:>7} rows {:>7.2f}x bare\n", v.what,
                   median(v.cpu), median(v.wall), v.rows,
                   median(v.cpu) / median(variants[v.reference].cpu));
    };

    const int last = 30;
    fmt::print("one case of {} runs (CPU time, medians of 7; ratio to the bare statement):\n",
               history_runs);
    std::vector<Timed> one{
        {"history(): newest 30 on main", 1,
         [&] {
           return store::history(db, {.case_glob = key, .branch = "main", .last = last}).size();
         }},
        {"bare statement: newest 30 on main", 1, [&] { return bare(trend_sql, {key}, last, ""); }},
        {"pre-v4 query: newest 30 on main", 1, [&] { return old_query(key, last); }},
        {"history(): whole history", 4,
         [&] { return store::history(db, {.case_glob = key, .branch = "main"}).size(); }},
        {"bare statement: whole history", 4, [&] { return bare(whole_sql, {key}, -1, ""); }},
    };
    race(one, 7);

    std::vector<std::string> keys;
    for (const auto& cr : judged.cases) keys.push_back(cr.spec.key);
    fmt::print("\ncompare --baseline history, {} cases x {} runs:\n", keys.size(), history_runs);
    std::size_t cases_with_baseline = 0;
    std::vector<Timed> gate{
        {"gate::history_baseline() (window 30)", 1,
         [&] {
           auto b = gate::history_baseline(db, judged, {});
           cases_with_baseline = b.cases.size();
           return b.cases.size() * b.cases.begin()->second.run_medians_ns.size();
         }},
        {"bare statements: newest 31 of each case", 1,
         [&] { return bare(gate_sql, keys, 31, fp); }},
        {"pre-v4 query: every case, cut in C++", 1, [&] { return old_query("*", 31); }},
    };
    race(gate, 3);
    fmt::print("  ({} of {} cases got a baseline)\n", cases_with_baseline, keys.size());

    t = Clock::now();
    const double c = cpu_ms();
    auto changes = store::find_changes(db, {.case_glob = key, .branch = "main"});
    fmt::print("\nchange points over those {} runs: {:.0f} ms wall, {:.0f} ms CPU, {} found",
               history_runs, ms_since(t), cpu_ms() - c, changes.size());
    for (const auto& ch : changes)
      fmt::print(" (at run {}, {:+.1f}%)", ch.point.index, 100 * ch.point.relative_change);
    fmt::print("\n");
  }
  if (getenv("BENCH_KEEP")) return 0;
  std::vector<std::string> temporary{big};
  if (kept_hist.empty()) temporary.push_back(hist);
  for (const auto& f : temporary)
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(f + s);
  return 0;
}
