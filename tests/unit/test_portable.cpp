#include <doctest/doctest.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/store/portable.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;
using store::Database;
using testing::make_run;
using testing::TempDir;

namespace {

std::string import_error(Database& db, const std::string& text) {
  std::istringstream in(text);
  try {
    store::import_jsonl(db, in, "in.jsonl");
  } catch (const util::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("store::portable") {
  TEST_CASE("export then import moves runs, verdicts and annotations; importing twice adds once") {
    TempDir dir;
    auto src = Database::open(dir.file("a.db"));
    core::Run first = make_run("c1", 10, 3, 50);
    first.cases[0].cost[0].launches = 3;
    first.cases[0].cost[0].copies = 2;
    auto id = src.write_run(first);
    src.write_run(make_run("c2", 20, 1, 4));
    src.write_verdicts(id, {{"k", "regression", "history", 1.08, 1.05, 1.1, 0.002, "", 3}});
    store::Annotation a;
    a.kind = store::AnnotationKind::reset;
    a.reason = "new compiler";
    a.author = "dan";
    a.created_ns = 11;
    src.add_annotation(a);
    std::stringstream buf;
    auto out = store::export_jsonl(src, buf);
    CHECK(out.runs == 2);
    CHECK(out.annotations == 1);
    const std::string text = buf.str();
    CHECK(text.rfind("{\"format\":\"attnprof-history\",\"version\":1}\n", 0) == 0);

    auto dst = Database::open(dir.file("b.db"));
    std::istringstream in1(text);
    auto s1 = store::import_jsonl(dst, in1, "x.jsonl");
    CHECK(s1.runs == 2);
    std::istringstream in2(text);
    auto s2 = store::import_jsonl(dst, in2, "x.jsonl");
    CHECK(s2.runs == 0);
    CHECK(s2.runs_skipped == 2);
    CHECK(dst.list_runs().size() == 2);
    CHECK(dst.annotations().size() == 1);
    auto run = dst.load_run(id);
    REQUIRE(run);
    CHECK(run->cases.size() == 3);
    CHECK(run->cases[2].samples.size() == 50);
    CHECK(run->cases[2].samples[3].dropped);
    CHECK(run->cases[0].cost[0].launches == 3);
    CHECK(run->cases[0].cost[0].copies == 2);
    CHECK(dst.verdicts(id).at(0).ratio == 1.08);
    // A second export of the imported history is the same text.
    std::stringstream again;
    store::export_jsonl(dst, again);
    CHECK(again.str() == text);
  }

  TEST_CASE("an A/B pair's rounds travel with its runs, as version 2; a pair left out keeps none") {
    TempDir dir;
    auto src = Database::open(dir.file("a.db"));
    auto pair = testing::make_ab_pair("pair-1", 10);
    pair.rounds[2].pass = 1;  // measured by a second pair of workers
    pair.rounds[2].base_clock_mhz = 1980;  // a GPU round whose clocks were read
    pair.rounds[2].head_clock_mhz = 1410;
    src.write_run(pair.base);
    src.write_run(pair.head);
    src.write_rounds("pair-1", pair.rounds);
    std::stringstream buf;
    const auto out = store::export_jsonl(src, buf);
    CHECK(out.ab_pairs == 1);
    const std::string text = buf.str();
    CHECK(text.rfind("{\"format\":\"attnprof-history\",\"version\":2}\n", 0) == 0);

    auto dst = Database::open(dir.file("b.db"));
    std::istringstream in(text);
    const auto s = store::import_jsonl(dst, in, "x.jsonl");
    CHECK(s.runs == 2);
    CHECK(s.ab_pairs == 1);
    const auto back = dst.rounds("pair-1");
    REQUIRE(back.size() == 3);
    CHECK(back[2].base_ns == 102);
    CHECK(back[2].head_ns == 112);
    CHECK(back[2].base_q1_ns == 92);
    CHECK(back[2].head_q1_ns == 101);
    CHECK(back[2].base_first);
    CHECK(back[2].pass == 1);
    CHECK(back[2].base_clock_mhz == 1980);
    CHECK(back[2].head_clock_mhz == 1410);
    CHECK(back[1].base_clock_mhz == 0);  // not read: not written, read back as not read
    CHECK(text.find("\"base_clock_mhz\":1980") != std::string::npos);
    CHECK(back[1].pass == 0);
    CHECK(back[1].head_n == 4);
    CHECK(dst.find_pair("pair-1"));
    // The same export, imported into a history without its runs (the run lines dropped, as a
    // filtered export would): the rounds are not kept without them.
    std::string rounds_only = text.substr(0, text.find('\n') + 1);
    rounds_only += text.substr(text.find("{\"ab_rounds\""));
    auto other = Database::open(dir.file("c.db"));
    std::istringstream in2(rounds_only);
    const auto s2 = store::import_jsonl(other, in2, "y.jsonl");
    CHECK(s2.ab_pairs == 0);
    CHECK(s2.ab_pairs_skipped == 1);
    CHECK(other.rounds("pair-1").empty());
    // Without pairs an export stays version 1, which older attnprofs read.
    std::stringstream plain;
    store::export_jsonl(src, plain, {.branch = "no such branch"});
    CHECK(plain.str().rfind("{\"format\":\"attnprof-history\",\"version\":1}\n", 0) == 0);
  }

  TEST_CASE("a damaged A/B round names its line and field") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    const std::string head = "{\"format\":\"attnprof-history\",\"version\":2}\n";
    CHECK(import_error(db, head + "{\"ab_rounds\":{\"rounds\":[]}}\n") ==
          "in.jsonl:2: field \"ab_rounds.pair\": missing");
    CHECK(import_error(db, head + "{\"ab_rounds\":{\"pair\":\"p\"}}\n") ==
          "in.jsonl:2: field \"ab_rounds.rounds\": expected an array");
    const std::string round =
        "{\"case\":\"k\",\"round\":0,\"base_first\":true,\"base_ns\":0,\"head_ns\":5,"
        "\"base_n\":1,\"head_n\":1,\"at_ns\":0}";
    CHECK(
        import_error(db, head + "{\"ab_rounds\":{\"pair\":\"p\",\"rounds\":[" + round + "]}}\n") ==
        "in.jsonl:2: field \"ab_rounds.rounds[0].base_ns\": a batch median must be above 0, "
        "got 0");
    // A round's lower quartiles: recorded for both sides or neither, never above the median.
    auto with = [&](const std::string& fields) {
      return head + "{\"ab_rounds\":{\"pair\":\"p\",\"rounds\":[{\"case\":\"k\",\"round\":0," +
             "\"base_first\":true,\"base_ns\":5,\"head_ns\":5,\"base_n\":1,\"head_n\":1," +
             "\"at_ns\":0" + fields + "}]}}\n";
    };
    CHECK(import_error(db, with(",\"base_q1_ns\":4")) ==
          "in.jsonl:2: field \"ab_rounds.rounds[0].head_q1_ns\": recorded for one side only");
    CHECK(import_error(db, with(",\"base_q1_ns\":6,\"head_q1_ns\":4")) ==
          "in.jsonl:2: field \"ab_rounds.rounds[0].base_q1_ns\": a batch's lower quartile is "
          "above its median");
    CHECK(import_error(db, with(",\"base_q1_ns\":-1,\"head_q1_ns\":4")) ==
          "in.jsonl:2: field \"ab_rounds.rounds[0].base_q1_ns\": a batch's lower quartile is 0 "
          "(not recorded) or above, got -1");
    CHECK(import_error(db, with(",\"head_clock_mhz\":-1410")) ==
          "in.jsonl:2: field \"ab_rounds.rounds[0].head_clock_mhz\": a batch's SM clock is 0 "
          "(not read) or above, got -1410");
  }

  TEST_CASE("export takes a run filter: one branch only") {
    TempDir dir;
    auto db = Database::open(dir.file("a.db"));
    db.write_run(make_run("m", 1));
    auto f = db.write_run(make_run("f", 2, 1, 3, 1000, "feature"));
    std::stringstream buf;
    CHECK(store::export_jsonl(db, buf, {.branch = "feature"}).runs == 1);
    auto dst = Database::open(dir.file("b.db"));
    store::import_jsonl(dst, buf, "x");
    REQUIRE(dst.list_runs().size() == 1);
    CHECK(dst.list_runs()[0].id == f);
  }

  TEST_CASE("bad input names the line") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    CHECK(import_error(db, "") == "in.jsonl: empty file: not an attnprof history export");
    CHECK(import_error(db, "{\"x\":1}\n") ==
          "in.jsonl:1: not an attnprof history export (no {\"format\":\"attnprof-history\"} "
          "header)");
    CHECK(import_error(db, "{\"format\":\"attnprof-history\",\"version\":9}\n") ==
          "in.jsonl:1: export version 9 is newer than this attnprof reads (1 to 2)");
    const std::string head = "{\"format\":\"attnprof-history\",\"version\":1}\n";
    CHECK(import_error(db, head + "\n{\"other\":1}\n") ==
          "in.jsonl:3: expected an object with \"run\", \"annotation\" or \"ab_rounds\"");
    CHECK(import_error(db, head + "{\"run\":{\"cases\":[]}}\n") == "in.jsonl:2: run without an id");
    CHECK(import_error(db, head + "{\"annotation\":{\"kind\":\"waive\"}}\n") ==
          "in.jsonl:2: unknown annotation kind \"waive\"");
    CHECK(import_error(db, head + "{\"annotation\":{\"kind\":\"accept\",\"author\":\"x\"}}\n") ==
          "in.jsonl:2: annotation: a reason is required");
    CHECK(import_error(db, head + "{not json\n").rfind("in.jsonl:2: not JSON (", 0) == 0);
  }

  TEST_CASE("only the export versions it knows are read") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    auto header = [&](const std::string& version) {
      return import_error(db, "{\"format\":\"attnprof-history\",\"version\":" + version + "}\n");
    };
    CHECK(header("1") == "no error");
    CHECK(header("2") == "no error");
    CHECK(header("0") ==
          "in.jsonl:1: \"version\": 0 is not an export version (this attnprof reads 1 to 2)");
    CHECK(header("-1") ==
          "in.jsonl:1: \"version\": -1 is not an export version (this attnprof reads 1 to 2)");
    CHECK(header("1.5") == "in.jsonl:1: \"version\": expected an integer, 1 to 2, got 1.5");
    CHECK(header("1.0") == "in.jsonl:1: \"version\": expected an integer, 1 to 2, got 1.0");
    CHECK(header("\"1\"") == "in.jsonl:1: \"version\": expected an integer, 1 to 2, got \"1\"");
    CHECK(header("18446744073709551616") ==
          "in.jsonl:1: \"version\": expected an integer, 1 to 2, got 1.8446744073709552e+19");
    CHECK(header("3") == "in.jsonl:1: export version 3 is newer than this attnprof reads (1 to 2)");
    CHECK(import_error(db, "{\"format\":\"attnprof-history\"}\n") ==
          "in.jsonl:1: \"version\": expected an integer, 1 to 2, got nothing");
  }

  TEST_CASE("a field of the wrong type or unequal sample arrays: the line and the field") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    const std::string head = "{\"format\":\"attnprof-history\",\"version\":1}\n";
    CHECK(import_error(db, head + "{\"run\":{\"id\":\"r\",\"started_ns\":\"soon\"}}\n") ==
          "in.jsonl:2: field \"run.started_ns\": expected an integer, got string \"soon\"");
    CHECK(import_error(db, head + "{\"run\":{\"id\":\"r\",\"cases\":[{\"spec\":{},\"samples\":"
                                  "{\"ns\":[1,2,3],\"at_ns\":[1,2,3],\"sm_clock_mhz\":[null,null],"
                                  "\"dropped\":[0,0,0]}}]}}\n") ==
          "in.jsonl:2: field \"run.cases[0].samples.sm_clock_mhz\": 2 values, but ns has 3: the "
          "sample arrays must be equally long");
    CHECK(import_error(db, head + "{\"run\":{\"id\":\"r\"},\"verdicts\":[{\"case\":\"k\","
                                  "\"verdict\":\"ok\",\"ratio\":\"1.0\"}]}\n") ==
          "in.jsonl:2: field \"verdicts[0].ratio\": expected a number, got string \"1.0\"");
    CHECK(import_error(db, head + "{\"annotation\":{\"kind\":\"accept\",\"reason\":5}}\n") ==
          "in.jsonl:2: field \"annotation.reason\": expected a string, got number 5");
    CHECK(import_error(db, head + "[1]\n") ==
          "in.jsonl:2: expected an object with \"run\", \"annotation\" or \"ab_rounds\"");
    CHECK(db.list_runs().empty());
  }

  TEST_CASE("a run record missing a field every export writes is refused, naming the field") {
    TempDir dir;
    auto src = Database::open(dir.file("src.db"));
    src.write_run(make_run("c", 100, 1, 2));
    std::ostringstream out;
    store::export_jsonl(src, out);
    const std::string text = out.str();
    const auto nl = text.find('\n');
    const std::string head = text.substr(0, nl + 1);
    const nlohmann::json line = nlohmann::json::parse(text.substr(nl + 1));
    auto db = Database::open(dir.file("h.db"));
    // Each was filled in before: started_ns as 1970, status as "complete", the rest empty.
    for (const char* key : {"git_commit", "started_ns", "ended_ns", "status", "env", "cases"}) {
      nlohmann::json damaged = line;
      damaged["run"].erase(key);
      CHECK(import_error(db, head + damaged.dump() + "\n") ==
            fmt::format("in.jsonl:2: field \"run.{}\": missing", key));
    }
    CHECK(db.list_runs().empty());
    CHECK(import_error(db, text) == "no error");
  }

  TEST_CASE("export of a stored text that is not UTF-8 names its run and writes the rest") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    auto db = Database::open(p);
    db.write_run(make_run("good", 1, 1));
    const std::string bad = db.write_run(make_run("bad", 2, 1));
    // A flipped byte in a text column; JSON cannot hold it, and dump() threw past export.
    db.connection().exec("UPDATE runs SET git_commit = CAST(X'6261ff64' AS TEXT) WHERE id = '" +
                         bad + "'");
    std::ostringstream out;
    const store::PortableStats s = store::export_jsonl(db, out);
    CHECK(s.runs == 1);
    REQUIRE(s.unreadable.size() == 1);
    CHECK(s.unreadable[0] ==
          p + ": run " + bad +
              " holds text that is not UTF-8 ([json.exception.type_error.316] invalid UTF-8 byte "
              "at index 2: 0xFF); the history is damaged: restore it from a backup, or export "
              "what is readable and import it into a new one");
  }

  TEST_CASE("a damaged line adds nothing, not even the good lines before it") {
    TempDir src_dir;
    auto src = Database::open(src_dir.file("src.db"));
    src.write_run(make_run("a", 1));
    src.write_run(make_run("b", 2));
    std::ostringstream out;
    store::export_jsonl(src, out);
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    CHECK(import_error(db, out.str() + "{\"run\":{\"id\":\"x\",\"pr\":7}}\n") ==
          "in.jsonl:4: field \"run.pr\": expected a string, got number 7");
    CHECK(db.list_runs().empty());
    // A failure while writing (here a required field the database checks) rolls back too.
    CHECK(
        import_error(db, out.str() + "{\"annotation\":{\"kind\":\"accept\",\"author\":\"x\"}}\n") ==
        "in.jsonl:4: annotation: a reason is required");
    CHECK(db.list_runs().empty());
    CHECK(import_error(db, out.str()) == "no error");
    CHECK(db.list_runs().size() == 2);
  }
}

TEST_SUITE("store::portable conflicts and damage") {
  TEST_CASE("a run id stored with other content is a conflict: both sides named, exit 2") {
    TempDir dir;
    core::Run run = make_run("c1", 1'764'000'000'000'000'000, 2, 5);
    run.id = "11111111-1111-4111-8111-111111111111";
    auto src = Database::open(dir.file("a.db"));
    src.write_run(run);
    std::stringstream buf;
    store::export_jsonl(src, buf);
    const std::string text = buf.str();

    core::Run other = run;  // another run that took the same id
    other.git_commit = "d2";
    other.cases[1].samples[3].ns += 1;
    auto dst = Database::open(dir.file("b.db"));
    dst.write_run(other);
    dst.write_run(make_run("kept", 5));
    CHECK(import_error(dst, text) ==
          "in.jsonl:2: run 11111111-1111-4111-8111-111111111111 is already stored with other "
          "content (stored: commit d2, branch main, started 2025-11-24T16:00:00Z, status "
          "complete, 2 cases, environment " +
              run.env.fingerprint().substr(0, 12) +
              "; this line: commit c1, branch main, started 2025-11-24T16:00:00Z, status "
              "complete, 2 cases, environment " +
              run.env.fingerprint().substr(0, 12) +
              "; first difference at /cases/1/samples/ns/3): import it into another history, or "
              "remove one of the two");
    CHECK(dst.list_runs().size() == 2);
    CHECK(dst.load_run(run.id)->git_commit == "d2");
    // The same content under that id is what it always was: already present.
    std::istringstream same(text);
    auto s = store::import_jsonl(src, same, "in.jsonl");
    CHECK(s.runs_skipped == 1);
  }

  TEST_CASE("export of a history with a damaged row writes every readable run and names the rest") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    auto db = Database::open(p);
    const std::string good = db.write_run(make_run("c1", 1));
    core::Run other = make_run("c2", 2);
    other.env = testing::cpu_env("Other CPU");
    const std::string bad = db.write_run(other);
    db.write_run(make_run("c3", 3));
    db.connection().exec("UPDATE environments SET fields = 'x' WHERE fingerprint = '" +
                         other.env.fingerprint() + "'");
    std::stringstream buf;
    const auto s = store::export_jsonl(db, buf);
    CHECK(s.runs == 2);
    REQUIRE(s.unreadable.size() == 1);
    CHECK(s.unreadable[0] ==
          p + ": table environments, fingerprint " + other.env.fingerprint() +
              ": column fields cannot be read (parse error at line 1, column 1: syntax error "
              "while parsing value - invalid literal; last read: 'x'); the history is damaged: "
              "restore it from a backup, or export what is readable and import it into a new "
              "one");
    // What it wrote is a history of its own: imported into a new file, every readable run.
    auto fresh = Database::open(dir.file("new.db"));
    std::istringstream in(buf.str());
    CHECK(store::import_jsonl(fresh, in, "h.jsonl").runs == 2);
    CHECK(fresh.load_run(good)->git_commit == "c1");
    CHECK_FALSE(fresh.has_run(bad));
  }
}
