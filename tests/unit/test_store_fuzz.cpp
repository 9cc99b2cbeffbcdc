// Randomized tests of the store against damaged input (a fuzzer without libFuzzer): damaged
// database files opened the way every command opens them, and damaged exports imported. Each
// must end in success or in util::EnvironmentError / util::InputError, never a crash or another
// exception; a file that is refused is left byte for byte as it was with nothing added beside
// it; a refused import changes nothing. Opening reads the schema, not every page: damage
// elsewhere is met by the reads that reach it. ATTNPROF_FUZZ_ITERATIONS scales the counts (default
// a few seconds' worth); ATTNPROF_FUZZ_SEED sets the seed. ci/sanitize.sh runs them under ASan.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "harness/store/database.h"
#include "harness/store/history.h"
#include "harness/store/portable.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;
using store::Database;
using testing::make_run;
using testing::read_bytes;
using testing::TempDir;

namespace {

long env_or(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

std::size_t pick(std::mt19937_64& rng, std::size_t n) {
  return n ? std::uniform_int_distribution<std::size_t>(0, n - 1)(rng) : 0;
}

// A history with a few runs, annotations and verdicts, in WAL or rollback-journal mode.
std::string make_history(const std::string& path, bool wal) {
  {
    auto db = Database::open(path);
    std::string id;
    for (int i = 0; i < 3; ++i) id = db.write_run(make_run("c" + std::to_string(i), i, 3, 300));
    db.add_annotation({0, store::AnnotationKind::accept, "*", id, "", "", "ok", "me", 1});
    db.write_verdicts(id, {{"m/prefill/b1-s128-fp32-none/cpu.naive", "unchanged", "history", 1.0,
                            0.9, 1.1, 0.5, "", 1}});
    if (!wal) db.connection().exec("PRAGMA journal_mode = DELETE");
  }
  return read_bytes(path);
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// One way of damaging a database file; returns its category.
std::string damage(const std::string& path, std::string bytes, std::mt19937_64& rng) {
  const std::size_t page = 4096;
  std::string category;
  switch (pick(rng, 8)) {
    case 0:
      category = "truncated";
      bytes.resize(pick(rng, bytes.size()));
      break;
    case 1:
      category = "bytes flipped";
      for (std::size_t i = 0, n = 1 + pick(rng, 16); i < n; ++i)
        bytes[pick(rng, bytes.size())] ^= static_cast<char>(1 + pick(rng, 255));
      break;
    case 2: {
      category = "page of garbage";
      const std::size_t at = pick(rng, bytes.size() / page) * page;
      for (std::size_t i = at; i < at + page && i < bytes.size(); ++i)
        bytes[i] = static_cast<char>(pick(rng, 256));
      break;
    }
    case 3:
      category = "header damaged";
      for (std::size_t i = 0, n = 1 + pick(rng, 4); i < n; ++i)
        bytes[pick(rng, 100)] = static_cast<char>(pick(rng, 256));
      break;
    case 4: {
      category = "page zeroed";
      const std::size_t at = pick(rng, bytes.size() / page) * page;
      std::fill(bytes.begin() + at, bytes.begin() + std::min(at + page, bytes.size()), '\0');
      break;
    }
    case 5:
      category = "garbage appended";
      for (std::size_t i = 0, n = 1 + pick(rng, 8192); i < n; ++i)
        bytes += static_cast<char>(pick(rng, 256));
      break;
    case 6: {
      category = "user_version changed";
      write_bytes(path, bytes);
      sqlite3* raw = nullptr;
      sqlite3_open(path.c_str(), &raw);
      const long v = static_cast<long>(pick(rng, 12)) - 4;
      sqlite3_exec(raw, ("PRAGMA user_version = " + std::to_string(v)).c_str(), nullptr, nullptr,
                   nullptr);
      sqlite3_close(raw);
      return category;
    }
    default: {
      category = "stored value damaged";
      write_bytes(path, bytes);
      sqlite3* raw = nullptr;
      sqlite3_open(path.c_str(), &raw);
      static const char* updates[] = {
          "UPDATE cases SET params = substr(params, 1, length(params) / 2)",
          "UPDATE cases SET params = replace(params, '\"batch\":1', '\"batch\":\"1\"')",
          "UPDATE environments SET fields = '[1,2'",
          "UPDATE cost_rows SET kernels = '{\"a\":1}'",
          "UPDATE cases SET status = 'weird'",
          "DROP TABLE metrics",
          "ALTER TABLE samples DROP COLUMN dropped",
          "UPDATE samples SET ns = 'x'"};
      sqlite3_exec(raw, updates[pick(rng, std::size(updates))], nullptr, nullptr, nullptr);
      sqlite3_close(raw);
      return category;
    }
  }
  write_bytes(path, bytes);
  return category;
}

enum class Outcome { ok, environment, input };

template <class Fn>
Outcome outcome_of(Fn&& fn, std::string* message = nullptr) {
  try {
    fn();
    return Outcome::ok;
  } catch (const util::EnvironmentError& e) {
    if (message) *message = e.what();
    return Outcome::environment;
  } catch (const util::InputError& e) {
    if (message) *message = e.what();
    return Outcome::input;
  } catch (const std::exception& e) {
    FAIL("unexpected exception: ", std::string(e.what()));
  }
  return Outcome::ok;
}

}  // namespace

TEST_SUITE("store fuzz") {
  TEST_CASE("damaged databases: every command's open agrees, refused files stay as they were") {
    const long iterations = env_or("ATTNPROF_FUZZ_ITERATIONS", 3000) / 30;
    std::mt19937_64 rng(static_cast<std::uint64_t>(env_or("ATTNPROF_FUZZ_SEED", 1)));
    TempDir dir;
    const std::string wal_bytes = make_history(dir.file("wal.db"), true);
    const std::string journal_bytes = make_history(dir.file("journal.db"), false);
    // Per category: cases, refused at open, and met after an open took them (by a read or by
    // check --full).
    std::map<std::string, int> per_category, refused_per_category, found_per_category;
    for (long i = 0; i < iterations; ++i) {
      const std::string p = dir.file("d" + std::to_string(i) + ".db");
      const std::string category = damage(p, i % 2 ? wal_bytes : journal_bytes, rng);
      ++per_category[category];
      const std::string before = read_bytes(p);
      INFO("case ", i, ": ", category);
      // Each command's use of the file, through the one open path.
      std::string refusal;
      const Outcome ro =
          outcome_of([&] { Database::open(p, Database::Mode::read_only); }, &refusal);
      std::string rw_refusal;
      const Outcome rw = outcome_of([&] { Database::open(p); }, &rw_refusal);
      INFO("read-only: ", refusal, "; read-write: ", rw_refusal);
      // What is decided whatever the bytes: every schema version but ours is refused (the
      // category sets -4 to 7); a file cut short of its header is no database; bytes past the
      // database's end, as its header gives it, are not part of it.
      if (category == "user_version changed") CHECK(ro == Outcome::environment);
      if (category == "truncated" && !before.empty() && before.size() < 100)
        CHECK(ro == Outcome::environment);
      if (category == "garbage appended") {
        CHECK(ro == Outcome::ok);
        CHECK(rw == Outcome::ok);
      }
      // A file readers refuse, writers refuse too; writers also refuse a damaged environment
      // row, which a reader only meets when it loads a run of that environment.
      if (ro != Outcome::ok) CHECK(rw == ro);
      if (rw != Outcome::ok) {
        CHECK(rw == Outcome::environment);
        CHECK(rw_refusal.find('\n') == std::string::npos);
        CHECK(read_bytes(p) == before);
        CHECK_FALSE(std::filesystem::exists(p + "-wal"));
        CHECK_FALSE(std::filesystem::exists(p + "-shm"));
      }
      if (ro != Outcome::ok) {
        ++refused_per_category[category];
        CHECK(refusal.find('\n') == std::string::npos);
        continue;
      }
      const Outcome read = outcome_of([&] {  // show, compare, export: read every run
        auto db = Database::open(p, Database::Mode::read_only);
        for (const auto& r : db.list_runs()) db.load_run(r.id);
        db.annotations();
      });
      const Outcome checked = outcome_of([&] {  // check --full
        Database::open(p, Database::Mode::read_only).check(Database::Check::full);
      });
      if (read != Outcome::ok || checked != Outcome::ok) ++found_per_category[category];
      if (category == "garbage appended") {
        CHECK(read == Outcome::ok);
        CHECK(checked == Outcome::ok);
      }
      outcome_of([&] {  // history, trend, changes
        auto db = Database::open(p, Database::Mode::read_only);
        store::history(db, {});
      });
      outcome_of([&] {  // export
        auto db = Database::open(p, Database::Mode::read_only);
        std::ostringstream out;
        store::export_jsonl(db, out);
      });
      outcome_of([&] {  // merge into a new history
        auto out = Database::open(dir.file("merged" + std::to_string(i) + ".db"));
        out.merge_from(p);
      });
      outcome_of([&] {  // run, annotate, prune
        auto db = Database::open(p);
        db.write_run(make_run("new", 99));
        db.add_annotation({0, store::AnnotationKind::ignore, "x*", "", "", "", "r", "a", 2});
        db.prune({.keep_last = 1, .dry_run = true});
      });
    }
    std::string summary;
    for (const auto& [c, n] : per_category) {
      summary += fmt::format("{}: {} ({} refused, {} found later); ", c, n, refused_per_category[c],
                             found_per_category[c]);
      // Each kind of damage (but bytes past the end) is met somewhere: an open that took every
      // damaged file, and a check that found nothing, fail here.
      if (c != "garbage appended" && n >= 5)
        CHECK_MESSAGE(refused_per_category[c] + found_per_category[c] > 0, c);
    }
    MESSAGE("damaged databases: ", iterations, ": ", summary);
  }

  // The damage a libFuzzer run found: an index page whose keys are out of order. history's key
  // walk asks the index for the first key after the last one that matches the glob; where the
  // entry the index seeks to does not match, the walk reads on in the page's order and can come
  // back to a key it had, and then went round forever. Made here by rewriting the last key of
  // the case-key index's page as the first one, in place; the table stays as it was.
  TEST_CASE("an index out of order: history refuses it instead of walking it forever") {
    TempDir dir;
    const std::string path = dir.file("h.db");
    {
      auto db = Database::open(path);
      core::Run run = make_run("c0", 1, 3, 3);
      const char* keys[] = {"m/a/cpu.x", "m/b/cpu.y", "m/c/cpu.x"};
      for (int i = 0; i < 3; ++i) run.cases[i].spec.key = keys[i];
      db.write_run(run);
      db.connection().exec("PRAGMA journal_mode = DELETE");
    }
    std::int64_t root = 0, page_size = 0;
    {
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
      sqlite3_stmt* st = nullptr;
      sqlite3_prepare_v2(raw,
                         "SELECT (SELECT rootpage FROM sqlite_schema WHERE name = 'cases_by_key'), "
                         "(SELECT page_size FROM pragma_page_size)",
                         -1, &st, nullptr);
      REQUIRE(sqlite3_step(st) == SQLITE_ROW);
      root = sqlite3_column_int64(st, 0);
      page_size = sqlite3_column_int64(st, 1);
      sqlite3_finalize(st);
      sqlite3_close(raw);
    }
    REQUIRE(root > 1);
    std::string bytes = read_bytes(path);
    const std::size_t begin = static_cast<std::size_t>((root - 1) * page_size);
    const std::size_t at = bytes.find("m/c/cpu.x", begin);
    REQUIRE(at != std::string::npos);
    REQUIRE(at < begin + static_cast<std::size_t>(page_size));
    bytes.replace(at, 9, "m/a/cpu.x");
    write_bytes(path, bytes);

    auto db = Database::open(path, Database::Mode::read_only);
    store::HistoryFilter f;
    f.case_glob = "*/cpu.x";
    std::string message;
    CHECK(outcome_of([&] { store::history(db, f); }, &message) == Outcome::environment);
    CHECK(message.find("index cases_by_key") != std::string::npos);
    CHECK(message.find("REINDEX") != std::string::npos);
    // The undamaged reads still answer: the glob the damage does not reach.
    f.case_glob = "*/cpu.y";
    CHECK(outcome_of([&] { store::history(db, f); }) == Outcome::ok);
  }

  TEST_CASE("damaged exports: imported whole or not at all") {
    const long iterations = env_or("ATTNPROF_FUZZ_ITERATIONS", 3000) / 10;
    std::mt19937_64 rng(static_cast<std::uint64_t>(env_or("ATTNPROF_FUZZ_SEED", 1)) + 7);
    TempDir dir;
    std::string good;
    {
      auto src = Database::open(dir.file("src.db"));
      std::string id;
      for (int i = 0; i < 3; ++i) id = src.write_run(make_run("c" + std::to_string(i), i, 2, 4));
      src.add_annotation({0, store::AnnotationKind::accept, "*", id, "", "", "ok", "me", 1});
      src.write_verdicts(id, {{"k", "unchanged", "history", 1.0, 0.9, 1.1, 0.5, "", 1}});
      std::ostringstream out;
      store::export_jsonl(src, out);
      good = out.str();
    }
    static const char* tokens[] = {
        "1.5",  "-1", "\"x\"", "null", "[]",    "{}",     "18446744073709551616", "true", "0",
        "\"\"", ",",  ":",     "\n",   "1e400", "\"\\n\""};
    auto db = Database::open(dir.file("h.db"));
    db.write_run(make_run("existing", 100));
    auto snapshot = [&] {
      std::ostringstream out;
      store::export_jsonl(db, out);
      return out.str();
    };
    long imported = 0, refused = 0;
    for (long i = 0; i < iterations; ++i) {
      std::string text = good;
      for (std::size_t r = 0, n = 1 + pick(rng, 3); r < n; ++r) {
        const std::size_t at = pick(rng, text.size());
        switch (pick(rng, 4)) {
          case 0:
            text[at] = static_cast<char>(pick(rng, 256));
            break;
          case 1:
            text.erase(at, 1 + pick(rng, 16));
            break;
          case 2: {  // replace a JSON value after a colon
            const std::size_t colon = text.find(':', at);
            if (colon == std::string::npos) break;
            const std::size_t end = text.find_first_of(",}]", colon + 1);
            text.replace(colon + 1, end == std::string::npos ? 0 : end - colon - 1,
                         tokens[pick(rng, std::size(tokens))]);
            break;
          }
          default:
            text.insert(at, tokens[pick(rng, std::size(tokens))]);
        }
      }
      const std::string before = snapshot();
      std::istringstream in(text);
      std::string message;
      const Outcome o = outcome_of([&] { store::import_jsonl(db, in, "in.jsonl"); }, &message);
      INFO("input: ", text);
      if (o == Outcome::ok) {
        ++imported;
        // Idempotent by id: a second import of the same text adds nothing.
        const std::string after = snapshot();
        std::istringstream again(text);
        CHECK(outcome_of([&] { store::import_jsonl(db, again, "in.jsonl"); }) == Outcome::ok);
        CHECK(snapshot() == after);
        continue;
      }
      ++refused;
      CHECK(o == Outcome::input);
      CHECK(message.find('\n') == std::string::npos);
      CHECK(message.starts_with("in.jsonl:"));
      CHECK(snapshot() == before);
    }
    MESSAGE("damaged exports: ", iterations, ": ", imported, " imported, ", refused, " refused");
    CHECK(refused > 0);
  }
}
