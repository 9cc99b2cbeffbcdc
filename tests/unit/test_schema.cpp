#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "golden.h"
#include "harness/gate/paired.h"
#include "harness/store/database.h"
#include "harness/store/history.h"
#include "harness/store/schema.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;
using store::Database;
using testing::read_bytes;
using testing::TempDir;

namespace {

std::string copy_fixture(const TempDir& dir, const std::string& name) {
  const std::string to = dir.file(name);
  std::filesystem::copy_file(std::string(ATTNPROF_TEST_DATA) + "/db/" + name, to);
  return to;
}

// Every table and column, so a migrated database can be compared with a new one.
std::string layout(store::sql::Connection& db) {
  std::string out;
  store::sql::Statement st(
      db,
      "SELECT m.name, p.name, p.type, p.\"notnull\", p.dflt_value, p.pk FROM sqlite_master m "
      "JOIN pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.name");
  while (st.step())
    out += st.text(0) + "." + st.text(1) + " " + st.text(2) + " " + st.text(3) + " " + st.text(4) +
           " " + st.text(5) + "\n";
  store::sql::Statement idx(db,
                            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT "
                            "NULL ORDER BY name");
  while (idx.step()) out += "index " + idx.text(0) + "\n";
  return out;
}
std::string layout(Database& db) {
  return layout(db.connection());
}

}  // namespace

TEST_SUITE("store::schema") {
  TEST_CASE("the migration chain is numbered 1..current without gaps") {
    int expected = 1;
    for (const auto& m : store::schema::migrations()) CHECK(m.version == expected++);
    CHECK(expected - 1 == store::schema::current_version);
  }

  TEST_CASE("every version's layout is pinned: a migration once released never changes") {
    // tests/data/golden/schema_layouts.txt holds each version's tables, columns (type, NOT
    // NULL, default, key) and indexes as the chain made them when that version was released: a
    // new migration adds a section; an edit to an old one (which files at that version never
    // run) changes a pinned section and fails here, where comparing the chain with layouts
    // generated from the same chain could not.
    std::string all;
    store::sql::Connection mem(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    for (const auto& m : store::schema::migrations()) {
      mem.exec(m.sql);
      all += fmt::format("== v{}\n{}", m.version, layout(mem));
    }
    testing::check_golden("schema_layouts.txt", all);
    // And the one file kept from a released version is laid out as its section says.
    store::sql::Connection v1(std::string(ATTNPROF_TEST_DATA) + "/db/v1.db", SQLITE_OPEN_READONLY);
    CHECK("== v1\n" + layout(v1) == all.substr(0, all.find("== v2")));
  }

  TEST_CASE("the layouts recorded at build time are what the chain makes, at every version") {
    std::string chain, recorded;
    store::sql::Connection mem(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    for (const auto& m : store::schema::migrations()) {
      mem.exec(m.sql);
      store::sql::Statement st(mem, store::schema::layout_query);
      std::string table;
      while (st.step()) {
        chain += st.text(0) == table ? "," : fmt::format("\nv{} {}: ", m.version, st.text(0));
        table = st.text(0);
        chain += st.text(1);
      }
    }
    for (const auto& t : store::schema::layouts())
      recorded += fmt::format("\nv{} {}: {}", t.version, t.table, t.columns);
    CHECK(recorded == chain);
    CHECK(chain.find("\nv9 samples: ") != std::string::npos);
  }

  TEST_CASE("a new database is at the current version") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    CHECK(db.opened_at_version() == 0);
    CHECK(db.connection().scalar_int("PRAGMA user_version") == store::schema::current_version);
  }

  TEST_CASE("v1 fixture: migrated in place, its runs intact, and laid out like a new database") {
    TempDir dir;
    const std::string p = copy_fixture(dir, "v1.db");
    auto db = Database::open(p);
    CHECK(db.opened_at_version() == 1);
    CHECK(db.connection().scalar_int("PRAGMA user_version") == store::schema::current_version);
    auto run = db.load_run("1111");
    REQUIRE(run);
    CHECK(run->git_commit == "aaaa000");
    CHECK(run->pr == "");
    CHECK(run->env.fields.at("cpu.model") == "Fixture CPU");
    REQUIRE(run->cases.size() == 1);
    CHECK(run->cases[0].spec.key == "m/prefill/b1/cpu.naive");
    CHECK(run->cases[0].backend == "");
    REQUIRE(run->cases[0].samples.size() == 2);
    CHECK(run->cases[0].samples[1].ns == 1100);
    CHECK(run->cases[0].summary.median_ns == 1050);
    REQUIRE(run->cases[0].cost.size() == 1);
    CHECK(run->cases[0].cost[0].kernels.empty());
    CHECK(db.load_run("latest")->id == "22222222-2222-4222-8222-222222222222");
    // New writes work on the migrated file, and its layout equals a fresh one's.
    db.write_run(testing::make_run("new", 1'800'000'000'000'000'000));
    auto fresh = Database::open(dir.file("fresh.db"));
    CHECK(layout(db) == layout(fresh));
    CHECK(store::history(db, {.case_glob = "m/prefill/b1/*"}).size() == 2);
  }

  TEST_CASE("v1 fixture opened read-only: queried through an in-memory migration, file untouched") {
    TempDir dir;
    const std::string p = copy_fixture(dir, "v1.db");
    const std::string before = read_bytes(p);
    {
      auto db = Database::open(p, Database::Mode::read_only);
      CHECK(db.opened_at_version() == 1);
      CHECK(db.load_run("latest")->cases[0].samples[0].sm_clock_mhz == 1980.0);
      CHECK(store::history(db, {}).size() == 2);
    }
    CHECK(read_bytes(p) == before);
    sqlite3* raw = nullptr;
    sqlite3_open_v2(p.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &st, nullptr);
    sqlite3_step(st);
    CHECK(sqlite3_column_int(st, 0) == 1);
    sqlite3_finalize(st);
    sqlite3_close(raw);
  }

  TEST_CASE("a damaged v1 file is refused before its migration, by both modes, left as it was") {
    TempDir dir;
    const std::string p = copy_fixture(dir, "v1.db");
    {
      std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(p) - 4096));
      for (int i = 0; i < 4096; ++i) f.put('\x5a');
    }
    const std::string before = read_bytes(p);
    for (auto mode : {Database::Mode::read_write, Database::Mode::read_only}) {
      std::string err = "no error";
      try {
        Database::open(p, mode);
      } catch (const util::EnvironmentError& e) {
        err = e.what();
      }
      CHECK_MESSAGE(err.starts_with(p + ": not a valid attnprof database or corrupt (*** in "
                                        "database main *** "),
                    err);
    }
    CHECK(read_bytes(p) == before);
    CHECK_FALSE(std::filesystem::exists(p + "-wal"));
  }

  TEST_CASE("a database made by the v1 DDL in code migrates like the committed fixture") {
    TempDir dir;
    const std::string p = dir.file("v1-from-code.db");
    {
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      REQUIRE(sqlite3_exec(raw, store::schema::migrations()[0].sql, nullptr, nullptr, nullptr) ==
              SQLITE_OK);
      sqlite3_exec(raw, "PRAGMA user_version = 1", nullptr, nullptr, nullptr);
      sqlite3_close(raw);
    }
    auto db = Database::open(p);
    CHECK(db.opened_at_version() == 1);
    auto fixture = Database::open(copy_fixture(dir, "v1.db"));
    CHECK(layout(db) == layout(fixture));
  }

  TEST_CASE(
      "v4 database: cost rows gain launches and copies; old rows read as none, new ones keep "
      "them") {
    TempDir dir;
    const std::string p = dir.file("v4.db");
    {
      // A v4 history as a v4 build wrote it: the chain's first four steps, and one run whose
      // cost row names a kernel but has no counts.
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      for (const auto& m : store::schema::migrations())
        if (m.version <= 4)
          REQUIRE(sqlite3_exec(raw, m.sql, nullptr, nullptr, nullptr) == SQLITE_OK);
      const char* data = R"sql(
        INSERT INTO environments VALUES ('fp4', '{"device.name":"cpu"}');
        INSERT INTO runs(id, started_ns, ended_ns, status, env_fingerprint)
          VALUES ('4444', 10, 20, 'complete', 'fp4');
        INSERT INTO cases(id, run_id, case_key, kernel, params, status)
          VALUES (1, '4444', 'm/prefill/b1/eager', 'eager', '{"key":"m/prefill/b1/eager"}', 'ok');
        INSERT INTO cost_rows(case_id, idx, op, input_shapes, parent, calls, cpu_self_ns,
          cpu_total_ns, device_self_ns, device_total_ns, share, bytes_allocated, kernels)
          VALUES (1, 0, 'aten::bmm', '[[1, 2], [2, 1]]', '', 2, 700, 900, 0, 0, 1, 64,
                  '[["gemm_kernel", 2]]');
        PRAGMA user_version = 4;
      )sql";
      REQUIRE(sqlite3_exec(raw, data, nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    }
    auto db = Database::open(p);
    CHECK(db.opened_at_version() == 4);
    CHECK(db.connection().scalar_int("PRAGMA user_version") == store::schema::current_version);
    auto old = db.load_run("4444");
    REQUIRE(old);
    REQUIRE(old->cases.size() == 1);
    REQUIRE(old->cases[0].cost.size() == 1);
    const core::CostRow& row = old->cases[0].cost[0];
    CHECK(row.op == "aten::bmm");
    CHECK(row.kernels == std::vector<std::pair<std::string, int>>{{"gemm_kernel", 2}});
    CHECK(row.launches == 0);
    CHECK(row.copies == 0);
    CHECK(row.kernel_ns.empty());
    // A run written after the migration keeps its counts.
    core::Run run = testing::make_run("new", 30);
    run.cases[0].cost[0].launches = 2;
    run.cases[0].cost[0].copies = 1;
    const std::string id = db.write_run(run);
    auto back = db.load_run(id);
    REQUIRE(back);
    CHECK(back->cases[0].cost[0].launches == 2);
    CHECK(back->cases[0].cost[0].copies == 1);
    auto fresh = Database::open(dir.file("fresh.db"));
    CHECK(layout(db) == layout(fresh));
  }
  TEST_CASE("v5 database: A/B rounds gain their pair of workers; old rounds read as pass 0") {
    TempDir dir;
    const std::string p = dir.file("v5.db");
    {
      // A v5 history with one A/B round, as a v5 build wrote it.
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      for (const auto& m : store::schema::migrations())
        if (m.version <= 5)
          REQUIRE(sqlite3_exec(raw, m.sql, nullptr, nullptr, nullptr) == SQLITE_OK);
      const char* data = R"sql(
        INSERT INTO ab_rounds VALUES ('pair-5', 'm/prefill/b1/eager', 0, 1, 100.0, 110.0, 4, 4, 7);
        PRAGMA user_version = 5;
      )sql";
      REQUIRE(sqlite3_exec(raw, data, nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    }
    auto db = Database::open(p);
    CHECK(db.opened_at_version() == 5);
    auto old = db.rounds("pair-5");
    REQUIRE(old.size() == 1);
    CHECK(old[0].head_ns == 110.0);
    CHECK(old[0].pass == 0);
    // Rounds written after the migration keep their pair of workers.
    core::AbRound r = old[0];
    r.round = 1;
    r.pass = 2;
    db.write_rounds("pair-5", {r});
    auto back = db.rounds("pair-5");
    REQUIRE(back.size() == 2);
    CHECK(back[1].pass == 2);
    auto fresh = Database::open(dir.file("fresh.db"));
    CHECK(layout(db) == layout(fresh));
  }

  TEST_CASE("v6 database: samples gain the descheduling record; old samples read as without") {
    TempDir dir;
    const std::string p = dir.file("v6.db");
    {
      // A v6 history as a v6 build wrote it: one run, one case, two samples.
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      for (const auto& m : store::schema::migrations())
        if (m.version <= 6)
          REQUIRE(sqlite3_exec(raw, m.sql, nullptr, nullptr, nullptr) == SQLITE_OK);
      const char* data = R"sql(
        INSERT INTO environments VALUES ('fp6', '{"device.name":"cpu"}');
        INSERT INTO runs(id, started_ns, ended_ns, status, env_fingerprint)
          VALUES ('6666', 10, 20, 'complete', 'fp6');
        INSERT INTO cases(id, run_id, case_key, kernel, params, status)
          VALUES (1, '6666', 'm/prefill/b1/eager', 'eager', '{"key":"m/prefill/b1/eager"}', 'ok');
        INSERT INTO samples VALUES (1, 0, 1000, 11, NULL, 0), (1, 1, 1100, 12, NULL, 0);
        PRAGMA user_version = 6;
      )sql";
      REQUIRE(sqlite3_exec(raw, data, nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    }
    auto db = Database::open(p);
    CHECK(db.opened_at_version() == 6);
    auto old = db.load_run("6666");
    REQUIRE(old);
    REQUIRE(old->cases.at(0).samples.size() == 2);
    CHECK(old->cases[0].samples[1].ns == 1100);
    CHECK_FALSE(old->cases[0].samples[1].cpu_ns.has_value());
    CHECK_FALSE(old->cases[0].samples[1].invol_switches.has_value());
    // Samples written after the migration keep it.
    core::Run run = testing::make_run("new", 30);
    REQUIRE_FALSE(run.cases[0].samples.empty());
    run.cases[0].samples[0].cpu_ns = 1234;
    run.cases[0].samples[0].invol_switches = 3;
    auto back = db.load_run(db.write_run(run));
    REQUIRE(back);
    CHECK(back->cases[0].samples[0].cpu_ns == 1234);
    CHECK(back->cases[0].samples[0].invol_switches == 3);
    CHECK_FALSE(back->cases[0].samples[1].cpu_ns.has_value());
    auto fresh = Database::open(dir.file("fresh.db"));
    CHECK(layout(db) == layout(fresh));
  }

  TEST_CASE("v7 database: cases gain their reference; checked ones read as sdpa.math") {
    TempDir dir;
    const std::string p = dir.file("v7.db");
    {
      // A v7 history as a v7 build wrote it: an ok, a failed and a skipped case.
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      for (const auto& m : store::schema::migrations())
        if (m.version <= 7)
          REQUIRE(sqlite3_exec(raw, m.sql, nullptr, nullptr, nullptr) == SQLITE_OK);
      const char* data = R"sql(
        INSERT INTO environments VALUES ('fp7', '{"device.name":"cpu"}');
        INSERT INTO runs(id, started_ns, ended_ns, status, env_fingerprint)
          VALUES ('7777', 10, 20, 'complete', 'fp7');
        INSERT INTO cases(id, run_id, case_key, kernel, params, status)
          VALUES (1, '7777', 'm/prefill/b1/eager', 'eager', '{"key":"m/prefill/b1/eager"}', 'ok'),
                 (2, '7777', 'm/prefill/b1/cpu.flash', 'cpu.flash',
                  '{"key":"m/prefill/b1/cpu.flash"}', 'failed'),
                 (3, '7777', 'm/prefill/b1/sdpa.flash', 'sdpa.flash',
                  '{"key":"m/prefill/b1/sdpa.flash"}', 'skipped');
        PRAGMA user_version = 7;
      )sql";
      REQUIRE(sqlite3_exec(raw, data, nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    }
    auto db = Database::open(p);
    CHECK(db.opened_at_version() == 7);
    auto old = db.load_run("7777");
    REQUIRE(old);
    REQUIRE(old->cases.size() == 3);
    CHECK(old->cases[0].reference == "sdpa.math");
    CHECK(old->cases[1].reference == "sdpa.math");
    CHECK(old->cases[2].reference == "");
    // Cases written after the migration keep theirs, "none" (not checked) included.
    core::Run run = testing::make_run("new", 30);
    run.cases[0].reference = "none";
    run.cases[1].reference = "aoti:mine-fp32.pt2";
    auto back = db.load_run(db.write_run(run));
    REQUIRE(back);
    CHECK(back->cases[0].reference == "none");
    CHECK(core::not_checked(back->cases[0]));
    CHECK(back->cases[1].reference == "aoti:mine-fp32.pt2");
    auto fresh = Database::open(dir.file("fresh.db"));
    CHECK(layout(db) == layout(fresh));
  }

  TEST_CASE("v8 database: samples gain the run-queue wait; old samples read as without") {
    TempDir dir;
    const std::string p = dir.file("v8.db");
    {
      // A v8 history as a v8 build wrote it: one run, one case, a sample with the v7 record.
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      for (const auto& m : store::schema::migrations())
        if (m.version <= 8)
          REQUIRE(sqlite3_exec(raw, m.sql, nullptr, nullptr, nullptr) == SQLITE_OK);
      const char* data = R"sql(
        INSERT INTO environments VALUES ('fp8', '{"device.name":"cpu"}');
        INSERT INTO runs(id, started_ns, ended_ns, status, env_fingerprint)
          VALUES ('8888', 10, 20, 'complete', 'fp8');
        INSERT INTO cases(id, run_id, case_key, kernel, params, status)
          VALUES (1, '8888', 'm/prefill/b1/eager', 'eager', '{"key":"m/prefill/b1/eager"}', 'ok');
        INSERT INTO samples VALUES (1, 0, 1000, 11, NULL, 0, 900, 2);
        PRAGMA user_version = 8;
      )sql";
      REQUIRE(sqlite3_exec(raw, data, nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    }
    auto db = Database::open(p);
    CHECK(db.opened_at_version() == 8);
    auto old = db.load_run("8888");
    REQUIRE(old);
    REQUIRE(old->cases.at(0).samples.size() == 1);
    CHECK(old->cases[0].samples[0].cpu_ns == 900);
    CHECK_FALSE(old->cases[0].samples[0].wait_ns.has_value());
    core::Run run = testing::make_run("new", 30);
    REQUIRE_FALSE(run.cases[0].samples.empty());
    run.cases[0].samples[0].wait_ns = 4321;
    auto back = db.load_run(db.write_run(run));
    REQUIRE(back);
    CHECK(back->cases[0].samples[0].wait_ns == 4321);
    CHECK_FALSE(back->cases[0].samples[1].wait_ns.has_value());
    auto fresh = Database::open(dir.file("fresh.db"));
    CHECK(layout(db) == layout(fresh));
  }

  TEST_CASE("v9 database: cases gain what they ran; old cases read as unknown, not as none") {
    TempDir dir;
    const std::string p = dir.file("v9.db");
    {
      // A v9 history as a v9 build wrote it: one ok case with a backend and a cost row.
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      for (const auto& m : store::schema::migrations())
        if (m.version <= 9)
          REQUIRE(sqlite3_exec(raw, m.sql, nullptr, nullptr, nullptr) == SQLITE_OK);
      const char* data = R"sql(
        INSERT INTO environments VALUES ('fp9', '{"device.name":"cpu"}');
        INSERT INTO runs(id, started_ns, ended_ns, status, env_fingerprint)
          VALUES ('9999', 10, 20, 'complete', 'fp9');
        INSERT INTO cases(id, run_id, case_key, kernel, params, status, backend, max_abs_error,
                          reference)
          VALUES (1, '9999', 'm/prefill/b1/sdpa.auto', 'sdpa.auto',
                  '{"key":"m/prefill/b1/sdpa.auto"}', 'ok', 'flash', 2.5e-7, 'sdpa.math');
        INSERT INTO cost_rows(case_id, idx, op, input_shapes, parent, calls, bytes_allocated)
          VALUES (1, 0, 'aten::_scaled_dot_product_flash_attention_for_cpu', '', '', 1, 0);
        PRAGMA user_version = 9;
      )sql";
      REQUIRE(sqlite3_exec(raw, data, nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    }
    auto db = Database::open(p);
    CHECK(db.opened_at_version() == 9);
    auto old = db.load_run("9999");
    REQUIRE(old);
    CHECK(old->cases.at(0).backend == "flash");
    CHECK(old->cases[0].max_abs_error == 2.5e-7);
    CHECK_FALSE(old->cases[0].kernels.has_value());  // unknown: its cost rows are not a record
    core::Run run = testing::make_run("new", 30, 3);
    run.cases[0].kernels = std::vector<std::string>{"aten::bmm", "aten::softmax"};
    run.cases[1].kernels = std::vector<std::string>{};  // recorded, and empty
    auto back = db.load_run(db.write_run(run));
    REQUIRE(back);
    CHECK(back->cases[0].kernels == std::vector<std::string>{"aten::bmm", "aten::softmax"});
    CHECK(back->cases[1].kernels == std::vector<std::string>{});
    CHECK_FALSE(back->cases[2].kernels.has_value());
    auto one = db.load_case(back->id, run.cases[0].spec.key);
    REQUIRE(one);
    CHECK(one->kernels == back->cases[0].kernels);
    CHECK(one->metrics == back->cases[0].metrics);
    CHECK_FALSE(db.load_case(back->id, "no/such/case").has_value());
    auto fresh = Database::open(dir.file("fresh.db"));
    CHECK(layout(db) == layout(fresh));
  }

  TEST_CASE("v10 database: A/B rounds gain each batch's lower quartile; old rounds judge medians") {
    TempDir dir;
    const std::string p = dir.file("v10.db");
    {
      // A v10 history with one A/B round, as a v10 build wrote it.
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      for (const auto& m : store::schema::migrations())
        if (m.version <= 10)
          REQUIRE(sqlite3_exec(raw, m.sql, nullptr, nullptr, nullptr) == SQLITE_OK);
      const char* data = R"sql(
        INSERT INTO ab_rounds VALUES ('pair-10', 'm/prefill/b1/eager', 0, 1, 100.0, 110.0, 4, 4, 7, 1);
        PRAGMA user_version = 10;
      )sql";
      REQUIRE(sqlite3_exec(raw, data, nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    }
    auto db = Database::open(p);
    CHECK(db.opened_at_version() == 10);
    auto old = db.rounds("pair-10");
    REQUIRE(old.size() == 1);
    CHECK(old[0].pass == 1);
    CHECK(old[0].base_q1_ns == 0);
    CHECK(old[0].head_q1_ns == 0);
    CHECK_FALSE(gate::judged_on_q1(old));
    // Rounds written after the migration keep their lower quartiles.
    core::AbRound r = old[0];
    r.round = 1;
    r.base_q1_ns = 90;
    r.head_q1_ns = 95;
    db.write_rounds("pair-10", {r});
    auto back = db.rounds("pair-10");
    REQUIRE(back.size() == 2);
    CHECK(back[1].base_q1_ns == 90);
    CHECK(back[1].head_q1_ns == 95);
    CHECK(gate::judged_on_q1(std::vector<core::AbRound>{back[1]}));
    // v12: rounds from before it read no clocks; rounds written after keep theirs.
    CHECK(back[0].base_clock_mhz == 0);
    CHECK(back[0].head_clock_mhz == 0);
    r.round = 2;
    r.base_clock_mhz = 1980;
    r.head_clock_mhz = 1410;
    db.write_rounds("pair-10", {r});
    back = db.rounds("pair-10");
    REQUIRE(back.size() == 3);
    CHECK(back[2].base_clock_mhz == 1980);
    CHECK(back[2].head_clock_mhz == 1410);
    auto fresh = Database::open(dir.file("fresh.db"));
    CHECK(layout(db) == layout(fresh));
  }
}

TEST_SUITE("store::schema") {
  TEST_CASE("migrate_in_place: v1 upgraded once; reads before it upgrade a copy, after it none") {
    TempDir dir;
    const std::string p = copy_fixture(dir, "v1.db");
    {
      auto db = Database::open(p, Database::Mode::read_only);
      REQUIRE(db.upgraded_copy());
      CHECK(db.upgraded_copy()->from_version == 1);
      CHECK(db.upgraded_copy()->peak_bytes > 0);
    }
    CHECK(Database::migrate_in_place(p) == 1);
    auto db = Database::open(p, Database::Mode::read_only);
    CHECK(db.opened_at_version() == store::schema::current_version);
    CHECK_FALSE(db.upgraded_copy());
    CHECK(store::history(db, {}).size() == 2);
    CHECK(Database::migrate_in_place(p) == store::schema::current_version);
    auto fresh = Database::open(dir.file("fresh.db"));
    CHECK_FALSE(fresh.upgraded_copy());  // written, not read through a copy
  }

  TEST_CASE("migrate_in_place: a missing or empty path is no history, and none is made") {
    TempDir dir;
    std::ofstream(dir.file("empty.db")).flush();
    for (const char* name : {"nosuch.db", "empty.db"}) {
      const std::string p = dir.file(name);
      CHECK_THROWS_WITH_AS(Database::migrate_in_place(p),
                           (p + ": no history to migrate (no such file, or an empty one); pass "
                                "the --db of one")
                               .c_str(),
                           util::EnvironmentError);
    }
    CHECK_FALSE(std::filesystem::exists(dir.file("nosuch.db")));
    CHECK(std::filesystem::file_size(dir.file("empty.db")) == 0);
  }

  TEST_CASE("a migration failing half-way undoes the ones before it: the version is as it was") {
    TempDir dir;
    const std::string p = copy_fixture(dir, "v1.db");
    {
      // An index of the user's own under a name v4 creates: v2 and v3 run, v4 fails.
      store::sql::Connection raw(p, SQLITE_OPEN_READWRITE);
      raw.exec("CREATE INDEX runs_by_branch_time ON runs(id)");
    }
    const std::string before = read_bytes(p);
    CHECK_THROWS_AS(Database::migrate_in_place(p), util::EnvironmentError);
    CHECK(read_bytes(p) == before);
    store::sql::Connection raw(p, SQLITE_OPEN_READONLY);
    CHECK(raw.scalar_int("PRAGMA user_version") == 1);
    CHECK(raw.scalar_int("SELECT count(*) FROM sqlite_master WHERE name = 'metrics'") == 0);
  }
}
