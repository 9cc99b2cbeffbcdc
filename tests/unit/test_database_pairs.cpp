// store::Database's case-by-case writes (a run killed half-way keeps what it finished) and A/B
// pairs with their rounds.
#include <doctest/doctest.h>

#include "harness/store/database.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;
using store::Database;
using testing::make_run;
using testing::TempDir;

TEST_SUITE("store::Database runs written case by case") {
  TEST_CASE("a run is incomplete until finished; each case is stored as it comes") {
    TempDir dir;
    Database db = Database::open(dir.file("h.db"));
    core::Run full = make_run("", 1000, 3, 5, 2000);
    core::Run header = full;
    header.cases.clear();
    const std::string id = db.begin_run(header);
    CHECK(db.find_run(id)->status == "incomplete");
    CHECK(db.latest_incomplete_run() == id);
    CHECK_FALSE(db.load_run("latest"));  // "latest" is the newest complete run
    db.write_case(id, full.cases[0]);
    db.write_case(id, full.cases[1]);
    auto partial = db.load_run(id);
    REQUIRE(partial);
    CHECK(partial->cases.size() == 2);
    CHECK(partial->cases[1].samples.size() == full.cases[1].samples.size());
    // A resumed run may store a case again: the newer result replaces it.
    core::CaseResult again = full.cases[1];
    again.message = "second try";
    db.write_case(id, again);
    db.write_case(id, full.cases[2]);
    db.finish_run(id, 9999, full.env);
    auto done = db.load_run("latest");
    REQUIRE(done);
    CHECK(done->id == id);
    CHECK(done->status == "complete");
    CHECK(done->ended_ns == 9999);
    CHECK(done->cases.size() == 3);
    CHECK(done->cases[1].message == "second try");  // in the order they were stored
    CHECK_FALSE(db.latest_incomplete_run());
  }

  TEST_CASE("an A/B: two runs with one pair id, and every round") {
    TempDir dir;
    Database db = Database::open(dir.file("h.db"));
    const auto p = testing::make_ab_pair("pair-1", 1000);
    const std::string b = db.write_run(p.base), h = db.write_run(p.head);
    db.write_rounds("pair-1", p.rounds);
    auto pair = db.find_pair("latest");
    REQUIRE(pair);
    CHECK(pair->first.id == b);
    CHECK(pair->second.id == h);
    CHECK(pair->second.side == "head");
    CHECK(db.find_pair("pair")->first.id == b);
    CHECK_FALSE(db.find_pair("nope"));
    auto back = db.rounds("pair-1");
    REQUIRE(back.size() == 3);
    CHECK(back[1].base_ns == 101);
    CHECK(back[1].head_ns == 111);
    CHECK(back[1].base_q1_ns == 91);
    CHECK(back[1].head_q1_ns == 100);
    CHECK_FALSE(back[1].base_first);
    CHECK(db.load_run(h)->pair_id == "pair-1");
    // Pruning both runs drops their rounds too.
    db.prune({.keep_last = 0});
    CHECK(db.rounds("pair-1").empty());
  }
}
