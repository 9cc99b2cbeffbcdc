// store::find_changes on a stored history: a slowdown reported with its commit range, per
// environment.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <random>

#include "harness/core/stability.h"
#include "harness/store/changes.h"
#include "store_fixtures.h"

using namespace attnprof;
using store::Database;
using testing::make_run;
using testing::TempDir;

TEST_SUITE("store::changes") {
  TEST_CASE("a slowdown landed at one commit is reported with its commit range, per environment") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    std::mt19937 rng(3);
    std::normal_distribution<double> noise(0, 5);
    for (int i = 0; i < 40; ++i) {
      const double base = i < 24 ? 1000 : 1150;
      core::Run run = make_run(fmt::format("commit{:02}", i), 1000 + i, 1, 3, base);
      run.cases[0].summary.median_ns = base + noise(rng);
      db.write_run(run);
      // The same case on another machine, flat: must not be mixed in nor flagged.
      core::Run other = make_run(fmt::format("commit{:02}", i), 1000 + i, 1, 3, 3000);
      other.env = testing::cpu_env("Other CPU");
      other.cases[0].summary.median_ns = 3000 + noise(rng);
      db.write_run(other);
    }
    // With no minimum magnitude the flat series shows a 0.2% "change" (p 0.0009): E-divisive's
    // false-alarm rate on pure noise of this length is about 1% (measured, 400 seeds). A 1%
    // floor, the CLI's default, removes it.
    CHECK(store::find_changes(db, {.branch = "main"}).size() == 2);
    stats::ChangePointSettings settings;
    settings.min_magnitude = 0.01;
    auto changes = store::find_changes(db, {.branch = "main"}, settings);
    REQUIRE(changes.size() == 1);
    const auto& c = changes[0];
    CHECK(c.case_key == "m/prefill/b1-s128-fp32-none/cpu.naive");
    CHECK(c.env_fingerprint == testing::cpu_env().fingerprint());
    CHECK(c.commit_before == "commit23");
    CHECK(c.commit_after == "commit24");
    CHECK(c.point.index == 24);
    CHECK(c.point.relative_change == doctest::Approx(0.15).epsilon(0.01));
    CHECK(c.series_length == 40);
    CHECK(c.at_ns == 1024);
  }

  TEST_CASE("a busy machine's run is left out of the series, as baselines leave it out") {
    // Eight runs at ~500 us, then eight at ~2.2 ms, one of which a busy machine made 7.6 ms
    // (descheduled in 78% of its samples): a CI run's history. With it, Welch's t-test on the
    // slow side's spread does not confirm the step at p < 0.001.
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    const double fast[] = {596, 591, 540, 634, 358, 528, 579, 379};
    const double slow[] = {2170, 2297, 2079, 1507, 7581, 2076, 2336, 2269};
    for (int i = 0; i < 16; ++i) {
      const double us = i < 8 ? fast[i] : slow[i - 8];
      core::Run run = make_run(fmt::format("commit{:02}", i), 1000 + i, 1, 3, us * 1000);
      run.cases[0].metrics[core::kDescheduledMetric] = i == 12 ? 0.78 : 0.01;
      db.write_run(run);
    }
    stats::ChangePointSettings settings;
    settings.min_magnitude = 0.01;
    store::UnstableRuns kept{.include = true};
    const auto with = store::find_changes(db, {.branch = "main"}, settings, &kept);
    CHECK(kept.left_out == 0);
    for (const auto& c : with)
      CHECK_FALSE((c.commit_before == "commit07" && c.commit_after == "commit08"));
    store::UnstableRuns left;
    const auto without = store::find_changes(db, {.branch = "main"}, settings, &left);
    CHECK(left.left_out == 1);
    REQUIRE(without.size() == 1);
    CHECK(without[0].commit_before == "commit07");
    CHECK(without[0].commit_after == "commit08");
    CHECK(without[0].series_length == 15);
  }

  TEST_CASE("bisect starts from the newest slowdown between two commits, not within one") {
    const auto change = [](std::string before, std::string after, double rel, std::int64_t at) {
      store::CaseChange c;
      c.commit_before = std::move(before);
      c.commit_after = std::move(after);
      c.point.relative_change = rel;
      c.at_ns = at;
      return c;
    };
    // c3 -> c4 doubled the time; later, among c4's own runs, the machine slowed by 43% (a CI
    // run's history); a speed-up and a step between runs that name no commit are newer still.
    std::vector<store::CaseChange> changes{change("c3", "c4", 1.0, 100),
                                           change("c4", "c4", 0.43, 200),
                                           change("c4", "c5", -0.3, 300),
                                           change("", "", 0.2, 400)};
    auto found = store::newest_bisectable_slowdown(changes);
    REQUIRE(found.change == &changes[0]);
    CHECK(found.passed_over == 2);
    // A newer slowdown across commits is chosen, and nothing older is counted as passed over.
    changes.push_back(change("c5", "c6", 0.1, 500));
    found = store::newest_bisectable_slowdown(changes);
    REQUIRE(found.change == &changes[4]);
    CHECK(found.passed_over == 0);
    // Only slowdowns within one commit: none to bisect, and how many there were.
    found = store::newest_bisectable_slowdown({changes[1], changes[3]});
    CHECK(found.change == nullptr);
    CHECK(found.passed_over == 2);
    CHECK(store::newest_bisectable_slowdown({changes[2]}).change == nullptr);
  }

  TEST_CASE("no history, no changes") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    CHECK(store::find_changes(db, {}).empty());
  }
}
