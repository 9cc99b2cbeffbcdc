// store::history: its filters, metrics and order on a stored history, bound parameters, and
// the query plans that keep it fast.
#include <doctest/doctest.h>

#include "harness/store/history.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;
using store::Database;
using store::HistoryFilter;
using testing::make_run;
using testing::TempDir;

namespace {

constexpr std::int64_t day = 86400LL * 1'000'000'000LL;

// main: c0..c4 a day apart; feature: f0; a second machine: m0.
struct History {
  TempDir dir;
  Database db = Database::open(dir.file("h.db"));
  History() {
    for (int i = 0; i < 5; ++i)
      db.write_run(make_run("c" + std::to_string(i) + "ffff", (10 + i) * day, 2, 3, 1000 + 10 * i));
    db.write_run(make_run("f0ffff", 12 * day, 2, 3, 5000, "feature"));
    core::Run other = make_run("m0ffff", 13 * day, 1, 3, 9000);
    other.env = testing::cpu_env("Other CPU");
    db.write_run(other);
  }
};

std::string error_of(auto&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("store::history") {
  TEST_CASE("by default: the median of every ok case of every complete run, oldest first") {
    History h;
    auto rows = store::history(h.db, {});
    CHECK(rows.size() == 13);  // 7 runs: 6 with two cases, 1 with one
    CHECK(rows[0].case_key == "m/prefill/b1-s128-fp32-none/cpu.naive");
    CHECK(rows[0].metric == "summary.median_ns");
    CHECK(rows[0].value == 1000);
    CHECK(rows[1].value == 1010);
    CHECK(rows[0].started_ns < rows[1].started_ns);
  }

  TEST_CASE("filters: case glob, kernel, branch, environment, dates, commit range, last N") {
    History h;
    const std::string key = "m/prefill/b1-s256-fp32-none/cpu.naive";
    CHECK(store::history(h.db, {.case_glob = "*s256*"}).size() == 6);
    CHECK(store::history(h.db, {.case_glob = key, .branch = "main"}).size() == 5);
    CHECK(store::history(h.db, {.kernel = "cpu.flash"}).empty());
    CHECK(store::history(h.db, {.kernel = "cpu.naive", .branch = "feature"}).size() == 2);
    const std::string other_fp = testing::cpu_env("Other CPU").fingerprint();
    auto m = store::history(h.db, {.env_fingerprint = other_fp.substr(0, 6)});
    REQUIRE(m.size() == 1);
    CHECK(m[0].value == 9000);
    auto dated = store::history(
        h.db, {.case_glob = key, .branch = "main", .since_ns = 11 * day, .until_ns = 13 * day});
    REQUIRE(dated.size() == 3);
    CHECK(dated[0].git_commit == "c1ffff");
    auto range = store::history(
        h.db, {.case_glob = key, .branch = "main", .commit_from = "c1", .commit_to = "c3ff"});
    REQUIRE(range.size() == 3);
    CHECK(range[0].git_commit == "c1ffff");
    CHECK(range[2].git_commit == "c3ffff");
    auto last = store::history(h.db, {.case_glob = key, .branch = "main", .last = 2});
    REQUIRE(last.size() == 2);
    CHECK(last[0].git_commit == "c3ffff");
    CHECK(last[1].git_commit == "c4ffff");
  }

  TEST_CASE("metrics: named ones, summary fields, and globs over both") {
    History h;
    auto t = store::history(
        h.db, {.case_glob = "*s128*", .metric = "throughput.tflops", .branch = "main"});
    REQUIRE(t.size() == 6);  // 5 runs on this machine, 1 on the other
    CHECK(t[0].value == 1.5);
    auto both = store::history(
        h.db, {.case_glob = "*s128*", .metric = "summary.m*n_ns", .branch = "main", .last = 1});
    REQUIRE(both.size() == 3);  // mean, median, min
    CHECK(both[0].metric == "summary.mean_ns");
    CHECK(both[1].metric == "summary.median_ns");
    CHECK(both[2].metric == "summary.min_ns");
    CHECK(store::history(h.db, {.metric = "*", .branch = "main", .last = 1}).size() ==
          2 * (std::size(store::summary_metrics) + 1));
  }

  TEST_CASE("accuracy: the check's largest error (a column) and its mean (a named metric)") {
    TempDir dir;
    Database db = Database::open(dir.file("a.db"));
    for (int i = 0; i < 3; ++i) {
      core::Run run = make_run("a" + std::to_string(i), (10 + i) * day, 1);
      run.cases[0].max_abs_error = 1e-7 * (i + 1);
      run.cases[0].metrics["accuracy.mean_abs_error"] = 1e-8 * (i + 1);
      db.write_run(run);
    }
    db.write_run(make_run("old", 20 * day, 1));  // recorded no error: not a row
    auto max = store::history(db, {.metric = "accuracy.max_abs_error"});
    REQUIRE(max.size() == 3);
    CHECK(max[0].value == 1e-7);
    CHECK(max[2].value == 3e-7);
    CHECK(max[2].metric == "accuracy.max_abs_error");
    auto both = store::history(db, {.metric = "accuracy.*", .last = 1});
    REQUIRE(both.size() == 2);
    CHECK(both[0].metric == "accuracy.max_abs_error");
    CHECK(both[0].value == 3e-7);
    CHECK(both[1].metric == "accuracy.mean_abs_error");
    CHECK(both[1].value == doctest::Approx(3e-8));
  }

  TEST_CASE("failed cases are left out unless asked for") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    core::Run run = make_run("c", 1);
    run.cases[0].status = core::CaseStatus::failed;
    db.write_run(run);
    CHECK(store::history(db, {}).size() == 1);
    CHECK(store::history(db, {.status = ""}).size() == 2);
    CHECK(store::history(db, {.status = "failed"})[0].status == "failed");
  }

  TEST_CASE("filters are bound, never spliced: SQL in a filter matches nothing and harms nothing") {
    History h;
    for (std::string evil : {"' OR 1=1 --", "x'; DROP TABLE runs; --", "\" OR \"\"=\""}) {
      CHECK(store::history(h.db, {.case_glob = evil}).empty());
      CHECK(store::history(h.db, {.kernel = evil}).empty());
      CHECK(store::history(h.db, {.metric = evil}).empty());
      CHECK(store::history(h.db, {.branch = evil}).empty());
      CHECK(store::history(h.db, {.env_fingerprint = evil}).empty());
    }
    CHECK(h.db.list_runs().size() == 7);
  }

  TEST_CASE("a commit range bound that matches no run is an input error naming it") {
    History h;
    CHECK(error_of([&] { store::history(h.db, {.commit_from = "zz9"}); }) ==
          "history: no run has a commit starting with \"zz9\"");
    CHECK(error_of([&] { store::history(h.db, {.branch = "feature", .commit_to = "c1"}); }) ==
          "history: no run on branch \"feature\" has a commit starting with \"c1\"");
  }

  TEST_CASE("the newest N are the tail of the full history, whichever way they are read") {
    // With N at most a quarter of the key's stored cases the read walks runs newest first;
    // above, it reads every case of the key and sorts. Both must cut the same rows.
    History h;
    const std::string key = "m/prefill/b1-s128-fp32-none/cpu.naive";  // 7 runs, 6 on main
    for (const std::string& branch : {std::string("main"), std::string()}) {
      auto all = store::history(h.db, {.case_glob = key, .branch = branch});
      REQUIRE(all.size() == (branch.empty() ? 7u : 6u));
      for (int n = 1; n <= 8; ++n) {
        CAPTURE(n);
        auto last = store::history(h.db, {.case_glob = key, .branch = branch, .last = n});
        REQUIRE(last.size() == std::min<std::size_t>(n, all.size()));
        for (std::size_t i = 0; i < last.size(); ++i)
          CHECK(last[i].run_id == all[all.size() - last.size() + i].run_id);
      }
    }
    CHECK(store::history(h.db, {.case_glob = key, .last = 0}).empty());
    CHECK(store::history(h.db, {.case_glob = key, .last = -3}).empty());
  }

  TEST_CASE("exact case keys: only those, each also under the glob, unknown ones give nothing") {
    History h;
    const std::string a = "m/prefill/b1-s128-fp32-none/cpu.naive";
    const std::string b = "m/prefill/b1-s256-fp32-none/cpu.naive";
    auto rows = store::history(h.db, {.case_keys = {b, "no/such/case", a, b}, .branch = "main"});
    REQUIRE(rows.size() == 11);  // a: 5 runs here and 1 on the other machine, b: 5
    CHECK(rows[0].case_key == a);
    CHECK(rows[5].case_key == a);
    CHECK(rows[6].case_key == b);
    CHECK(store::history(h.db, {.case_glob = "*s256*", .case_keys = {a, b}}).size() == 6);
  }
}

namespace {

// The plan steps of every history read for `f` that read a whole table, each with its
// statement. Walking an index in the order a statement asks for, cut by its LIMIT (runs newest
// first, the next case key), is no whole read; the same walk followed by a sort is.
std::vector<std::string> table_scans(Database& db, const HistoryFilter& f) {
  std::vector<std::string> scans;
  for (const auto& plan : store::explain_history(db, f)) {
    bool sorted = false;
    for (const auto& step : plan.steps) sorted = sorted || step.starts_with("USE TEMP B-TREE");
    const bool ordered_walk = plan.sql.find(" LIMIT ") != std::string::npos && !sorted;
    for (const auto& step : plan.steps)
      for (const char* table : {"runs", "cases", "samples", "summaries", "metrics"}) {
        const std::string scan = std::string("SCAN ") + table;
        if (step != scan && !step.starts_with(scan + " ")) continue;
        if (!ordered_walk || step.find(" USING ") == std::string::npos)
          scans.push_back(step + "  <- " + plan.sql);
      }
  }
  return scans;
}

// The plan of the one statement that reads values for `f`.
std::vector<std::string> value_plan(Database& db, const HistoryFilter& f) {
  for (const auto& plan : store::explain_history(db, f))
    if (plan.sql.starts_with("SELECT runs.id")) return plan.steps;
  return {};
}

}  // namespace

TEST_SUITE("store::history plans") {
  // The History fixture's s128 case is in 7 runs: --last 1 walks runs, no --last reads the key.
  const std::string key = "m/prefill/b1-s128-fp32-none/cpu.naive";

  TEST_CASE("every read is served by an index, for every kind of filter") {
    History h;
    const std::string fp = testing::cpu_env().fingerprint();
    const HistoryFilter filters[] = {
        {.case_keys = {key},
         .branch = "main",
         .env_fingerprint = fp,
         .until_ns = 20 * day,
         .last = 1},
        {.case_glob = "m/prefill/*", .branch = "main", .last = 1},
        {.case_glob = "*s128*", .last = 1},
        {.case_glob = key, .env_fingerprint = fp.substr(0, 4), .last = 1},
        {.case_glob = key, .branch = "main", .commit_from = "c1", .commit_to = "c3"},
        {.case_glob = "*", .kernel = "cpu.naive", .metric = "*", .status = ""},
        {.case_glob = key, .metric = "throughput.tflops", .since_ns = 11 * day, .last = 2},
    };
    for (const auto& f : filters) {
      CAPTURE(f.case_glob);
      CHECK(table_scans(h.db, f) == std::vector<std::string>{});
    }
  }

  TEST_CASE("the gate's read walks runs_by_branch newest first, one probe per run, no sort") {
    History h;
    const std::string fp = testing::cpu_env().fingerprint();
    CHECK(value_plan(h.db, {.case_keys = {key},
                            .branch = "main",
                            .env_fingerprint = fp,
                            .until_ns = 20 * day,
                            .last = 1}) ==
          std::vector<std::string>{
              "SEARCH runs USING INDEX runs_by_branch (git_branch=? AND env_fingerprint=? AND "
              "started_ns<?)",
              "SEARCH cases USING INDEX sqlite_autoindex_cases_1 (run_id=? AND case_key=?)",
              "SEARCH summaries USING INTEGER PRIMARY KEY (rowid=?)"});
  }

  TEST_CASE("trend's read (a branch, no environment) walks runs_by_branch_time") {
    History h;
    CHECK(
        value_plan(
            h.db, {.case_glob = key, .metric = "throughput.tflops", .branch = "main", .last = 1}) ==
        std::vector<std::string>{
            "SEARCH runs USING INDEX runs_by_branch_time (git_branch=?)",
            "SEARCH cases USING INDEX sqlite_autoindex_cases_1 (run_id=? AND case_key=?)",
            "SEARCH metrics USING PRIMARY KEY (case_id=? AND name=?)"});
  }

  TEST_CASE("a whole history reads the key's cases through cases_by_key") {
    History h;
    CHECK(value_plan(h.db, {.case_glob = key})[0] ==
          "SEARCH cases USING INDEX cases_by_key (case_key=?)");
  }

  TEST_CASE("without the indexes the same reads scan, and the check says so") {
    History h;
    h.db.connection().exec(
        "DROP INDEX runs_by_branch; DROP INDEX runs_by_branch_time; DROP INDEX runs_by_time");
    auto scans = table_scans(h.db, {.case_glob = key, .branch = "main", .last = 1});
    REQUIRE(scans.size() == 1);
    CHECK(scans[0].starts_with("SCAN runs "));
    CHECK(scans[0].find("  <- SELECT runs.id") != std::string::npos);
  }
}
