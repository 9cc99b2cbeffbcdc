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
}
