// store::Database: runs, annotations and verdicts round-trip; prune and merge; damaged,
// foreign or locked files refused untouched; concurrent writers and kill -9 lose no run.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

#include "harness/store/database.h"
#include "harness/store/history.h"
#include "harness/store/portable.h"
#include "harness/store/schema.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;
using store::Database;
using testing::make_run;
using testing::read_bytes;
using testing::TempDir;

namespace {

std::int64_t count(Database& db, const char* sql) {
  return db.connection().scalar_int(sql);
}

std::string integrity(const std::string& path) {
  sqlite3* raw = nullptr;
  sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  std::string out;
  sqlite3_exec(
      raw, "PRAGMA integrity_check",
      [](void* o, int, char** v, char**) {
        *static_cast<std::string*>(o) += v[0];
        return 0;
      },
      &out, nullptr);
  sqlite3_close(raw);
  return out;
}

std::string error_of(auto&& fn) {
  try {
    fn();
  } catch (const util::EnvironmentError& e) {
    return e.what();
  } catch (const util::InputError& e) {
    return std::string("input: ") + e.what();
  }
  return "no error";
}

void write_file(const char* path, const std::string& text) {
  std::ofstream(path) << text;
}

// Runs fn in a child process and returns what it returned (or the message of what it threw):
// for what must hold in a process of other privileges than the test's own.
std::string in_child(const std::function<std::string()>& fn) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    try {
      out = fn();
    } catch (const std::exception& e) {
      out = e.what();
    }
    for (std::size_t at = 0; at < out.size();) {
      const ssize_t n = write(fds[1], out.data() + at, out.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return got;
}

// Runs fn in a child process that sees `folder` as read-only media: a read-only bind mount in a
// user and mount namespace of its own, which needs no privileges (and where root's permission
// bypass does not help: writes fail with EROFS). Returns what fn returned, or why the child could
// not set the mount up.
std::string on_read_only_media(const std::string& folder, const std::function<std::string()>& fn) {
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  return in_child([&]() -> std::string {
    struct statvfs vfs {};
    statvfs(folder.c_str(), &vfs);
    // A remount must keep the flags the parent's mount locks (nosuid, nodev, noexec).
    unsigned long keep = 0;
    if (vfs.f_flag & ST_NOSUID) keep |= MS_NOSUID;
    if (vfs.f_flag & ST_NODEV) keep |= MS_NODEV;
    if (vfs.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
      return std::string("unshare: ") + std::strerror(errno);
    write_file("/proc/self/setgroups", "deny");
    write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1");
    write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1");
    if (mount(folder.c_str(), folder.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        mount(nullptr, folder.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, nullptr) !=
            0)
      return std::string("mount: ") + std::strerror(errno);
    return fn();
  });
}

// Runs fn as the test's own user, or as root (whom file permissions do not bind: CI runs as
// root) in a child process that has become nobody.
std::string bound_by_permissions(const std::function<std::string()>& fn) {
  if (geteuid() != 0) return fn();
  return in_child([&]() -> std::string {
    const passwd* nobody = getpwnam("nobody");
    const uid_t uid = nobody ? nobody->pw_uid : 65534;
    const gid_t gid = nobody ? nobody->pw_gid : 65534;
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
      return std::string("cannot become nobody: ") + std::strerror(errno);
    return fn();
  });
}

}  // namespace

TEST_SUITE("store::Database") {
  TEST_CASE("a run round-trips: environment, cases, every sample, summary, metrics, cost rows") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    core::Run run = make_run("abc123", 1'700'000'000'000'000'000, 3, 11);
    run.pr = "42";
    run.ci_url = "https://ci/1";
    run.cases[1].status = core::CaseStatus::failed;
    run.cases[1].message = "max abs error 0.3 > 0.01";
    run.cases[1].max_abs_error = 0.3;
    run.cases[2].backend = "flash";
    run.cases[2].spec.scale = 0.125;
    // The whole cost row (schema v5), as a GPU case's traced pass fills it.
    for (auto& c : run.cases) {
      c.cost[0].launches = 2;
      c.cost[0].copies = 1;
      c.cost[0].input_dtypes = "[float, float]";
      c.cost[0].bytes_freed = 4096;
      c.cost[0].kernel_ns = {1250.5};
    }
    const std::string id = db.write_run(run);
    CHECK(id.size() == 36);
    CHECK(id[14] == '4');

    auto back = db.load_run(id);
    REQUIRE(back);
    CHECK(back->id == id);
    CHECK(back->git_commit == "abc123");
    CHECK(back->pr == "42");
    CHECK(back->ci_url == "https://ci/1");
    CHECK(back->env.fields == run.env.fields);
    CHECK(back->env.fingerprint() == run.env.fingerprint());
    REQUIRE(back->cases.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      const auto &a = run.cases[i], &b = back->cases[i];
      CHECK(b.spec.key == a.spec.key);
      CHECK(b.spec.q_len == a.spec.q_len);
      CHECK(b.spec.scale == a.spec.scale);
      CHECK(b.status == a.status);
      CHECK(b.message == a.message);
      CHECK(b.backend == a.backend);
      CHECK(b.max_abs_error == a.max_abs_error);
      REQUIRE(b.samples.size() == 11);
      for (std::size_t j = 0; j < 11; ++j) {
        CHECK(b.samples[j].ns == a.samples[j].ns);
        CHECK(b.samples[j].at_ns == a.samples[j].at_ns);
        CHECK(b.samples[j].sm_clock_mhz == a.samples[j].sm_clock_mhz);
        CHECK(b.samples[j].dropped == a.samples[j].dropped);
      }
      CHECK(b.summary.median_ns == a.summary.median_ns);
      CHECK(b.summary.mean_ns == a.summary.mean_ns);
      CHECK(b.metrics == a.metrics);
      REQUIRE(b.cost.size() == 2);
      CHECK(b.cost[0].op == "aten::bmm");
      CHECK(b.cost[0].kernels == a.cost[0].kernels);
      CHECK(b.cost[0].launches == 2);
      CHECK(b.cost[0].copies == 1);
      CHECK(b.cost[0].input_dtypes == "[float, float]");
      CHECK(b.cost[0].bytes_freed == 4096);
      CHECK(b.cost[0].kernel_ns == std::vector<double>{1250.5});
      CHECK(b.cost[1].share == 0.3);
      CHECK(b.cost[1].launches == 0);
      CHECK(b.cost[1].kernel_ns.empty());
    }
  }

  TEST_CASE("writing the same run twice stores it once") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    core::Run run = make_run("abc", 1);
    run.id = "fixed-id";
    CHECK(db.write_run(run) == "fixed-id");
    CHECK(db.write_run(run) == "fixed-id");
    CHECK(count(db, "SELECT count(*) FROM runs") == 1);
    CHECK(count(db, "SELECT count(*) FROM samples") == 10);
  }

  TEST_CASE("two cases with one key are refused before anything is written") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    core::Run run = make_run("abc", 1, 2);
    run.cases[1].spec.key = run.cases[0].spec.key;
    CHECK(error_of([&] { db.write_run(run); }) ==
          "input: run: two cases have the key \"m/prefill/b1-s128-fp32-none/cpu.naive\"; case "
          "keys must be unique");
    CHECK(count(db, "SELECT count(*) FROM runs") == 0);
  }

  TEST_CASE("latest, full ids, unique prefixes, ambiguous prefixes, absent runs") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    core::Run a = make_run("c1", 100), b = make_run("c2", 300), c = make_run("c3", 200);
    a.id = "aaaa-1";
    b.id = "aaab-2";
    c.id = "cccc-3";
    c.status = "interrupted";
    core::Run d = make_run("c4", 400);
    d.id = "dddd-4";
    d.status = "interrupted";
    for (auto* r : {&a, &b, &c, &d}) db.write_run(*r);
    CHECK(db.load_run("latest")->id == "aaab-2");  // newest *complete* run
    CHECK(db.load_run("cccc-3")->git_commit == "c3");
    CHECK(db.load_run("ccc")->id == "cccc-3");
    CHECK(db.find_run("aaaa")->id == "aaaa-1");
    CHECK_FALSE(db.load_run("zzz"));
    CHECK_FALSE(db.load_run("%"));  // a pattern character is matched literally
    CHECK(error_of([&] { db.load_run("aaa"); }) ==
          "input: run: \"aaa\" matches several runs (aaaa-1, aaab-2); give more of the id");
    auto runs = db.list_runs();
    REQUIRE(runs.size() == 4);
    CHECK(runs[0].id == "aaaa-1");
    CHECK(runs[0].cases == 2);
    CHECK(db.list_runs({.complete_only = true}).size() == 2);
  }

  TEST_CASE("latest is nullopt on an empty database") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    CHECK_FALSE(db.load_run("latest"));
  }

  TEST_CASE("annotations: written with reason and author, read back, required fields checked") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    store::Annotation a;
    a.kind = store::AnnotationKind::accept;
    a.case_glob = "llama*/decode/*";
    a.run_id = "r1";
    a.reason = "new masking path is 4% slower, accepted";
    a.author = "alice";
    a.created_ns = 5;
    auto id = db.add_annotation(a);
    CHECK(id > 0);
    a.kind = store::AnnotationKind::reset;
    a.run_id = "";
    a.created_ns = 6;
    db.add_annotation(a);
    auto all = db.annotations();
    REQUIRE(all.size() == 2);
    CHECK(all[0].kind == store::AnnotationKind::accept);
    CHECK(all[0].case_glob == "llama*/decode/*");
    CHECK(all[0].author == "alice");
    CHECK(all[1].kind == store::AnnotationKind::reset);
    CHECK(db.annotations("r1").size() == 1);
    store::Annotation no_reason = a;
    no_reason.reason = "";
    CHECK(error_of([&] { db.add_annotation(no_reason); }) ==
          "input: annotation: a reason is required");
    store::Annotation no_author = a;
    no_author.author = "";
    CHECK(error_of([&] { db.add_annotation(no_author); }) ==
          "input: annotation: an author is required");
    CHECK(store::parse_annotation_kind("ignore") == store::AnnotationKind::ignore);
    CHECK_FALSE(store::parse_annotation_kind("waive"));
  }

  TEST_CASE("verdicts: stored per run and case, replaced for the same baseline") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    auto id = db.write_run(make_run("c", 1));
    store::StoredVerdict v{"k1", "regression", "history", 1.07, 1.04, 1.1, 0.001, "7% slower", 9};
    db.write_verdicts(id, {v, {"k2", "unchanged", "history", 1.0, {}, {}, {}, "", 9}});
    v.verdict = "inconclusive";
    db.write_verdicts(id, {v});
    auto back = db.verdicts(id);
    REQUIRE(back.size() == 2);
    CHECK(back[0].case_key == "k1");
    CHECK(back[0].verdict == "inconclusive");
    CHECK(back[0].ratio == 1.07);
    CHECK(back[1].ci_low == std::nullopt);
    CHECK(error_of([&] { db.write_verdicts("nope", {v}); }) ==
          "input: run: no run \"nope\" to attach verdicts to");
  }

  TEST_CASE("prune keeps the newest N per branch and annotated runs, and deletes every row") {
    TempDir dir;
    auto db = Database::open(dir.file("h.db"));
    std::vector<std::string> main_ids;
    for (int i = 0; i < 5; ++i) main_ids.push_back(db.write_run(make_run("m", 100 + i)));
    for (int i = 0; i < 3; ++i) db.write_run(make_run("f", 200 + i, 2, 5, 1000, "feature"));
    store::Annotation keep;
    keep.kind = store::AnnotationKind::accept;
    keep.run_id = main_ids[0];
    keep.reason = "baseline of record";
    keep.author = "bob";
    db.add_annotation(keep);

    CHECK(error_of([&] { db.prune({}); }) ==
          "input: prune: give a retention policy: --keep-last N, --older-than DAYS, or both");
    auto planned = db.prune({.keep_last = 2, .dry_run = true});
    CHECK(planned.size() == 3);  // main: 3 beyond the newest 2, one of them annotated; feature: 1
    CHECK(count(db, "SELECT count(*) FROM runs") == 8);
    auto pruned = db.prune({.keep_last = 2});
    REQUIRE(pruned.size() == 3);
    CHECK(pruned[0].id == main_ids[1]);
    CHECK(pruned[1].id == main_ids[2]);
    CHECK(pruned[2].git_branch == "feature");
    CHECK(db.has_run(main_ids[0]));
    CHECK(count(db, "SELECT count(*) FROM runs") == 5);
    CHECK(count(db, "SELECT count(*) FROM cases") == 10);
    CHECK(count(db, "SELECT count(*) FROM samples") == 50);
    CHECK(count(db, "SELECT count(*) FROM cost_rows") == 20);
    // Both conditions must hold: old enough *and* beyond the newest N.
    CHECK(db.prune({.keep_last = 0, .older_than_ns = 103}).size() == 0);
    CHECK(db.prune({.keep_last = 0, .older_than_ns = 104}).size() == 1);
  }

  TEST_CASE("merge folds shards into one history; merging twice adds nothing") {
    TempDir dir;
    auto a = Database::open(dir.file("a.db"));
    auto b = Database::open(dir.file("b.db"));
    auto shared = make_run("s", 50);
    shared.id = "shared-run";
    a.write_run(shared);
    b.write_run(shared);
    a.write_run(make_run("a1", 100));
    auto b1 = b.write_run(make_run("b1", 200));
    b.write_verdicts(b1, {{"k", "regression", "file", 1.1, {}, {}, {}, "", 1}});
    store::Annotation an;
    an.kind = store::AnnotationKind::ignore;
    an.case_glob = "flaky/*";
    an.reason = "flaky";
    an.author = "carol";
    an.created_ns = 7;
    b.add_annotation(an);

    auto out = Database::open(dir.file("out.db"));
    auto s1 = out.merge_from(dir.file("a.db"));
    CHECK(s1.runs_added == 2);
    auto s2 = out.merge_from(dir.file("b.db"));
    CHECK(s2.runs_added == 1);
    CHECK(s2.runs_present == 1);
    CHECK(s2.verdicts_added == 1);
    CHECK(s2.annotations_added == 1);
    auto s3 = out.merge_from(dir.file("b.db"));
    CHECK(s3.runs_added == 0);
    CHECK(s3.runs_present == 2);
    CHECK(s3.verdicts_added == 0);
    CHECK(s3.annotations_added == 0);
    CHECK(count(out, "SELECT count(*) FROM runs") == 3);
    CHECK(count(out, "SELECT count(*) FROM samples") == 30);
    CHECK(out.load_run(b1)->cases.size() == 2);
    // An A/B pair brings its rounds, so it can be judged again in the merged history; merging
    // again rewrites the same rounds, it does not add rows.
    const auto pair = testing::make_ab_pair("pair-9", 300, 2);
    b.write_run(pair.base);
    b.write_run(pair.head);
    b.write_rounds("pair-9", pair.rounds);
    auto s4 = out.merge_from(dir.file("b.db"));
    CHECK(s4.runs_added == 2);
    CHECK(s4.ab_pairs == 1);
    CHECK(out.rounds("pair-9").size() == 2);
    CHECK(out.merge_from(dir.file("b.db")).ab_pairs == 1);
    CHECK(count(out, "SELECT count(*) FROM ab_rounds") == 2);
    CHECK(error_of([&] { out.merge_from(dir.file("missing.db")); }) ==
          dir.file("missing.db") +
              ": no such database; run `attnprof run` first, or pass --db or set ATTNPROF_DB");
  }

  TEST_CASE("a merge that fails part way writes nothing") {
    TempDir dir;
    const std::string in = dir.file("in.db"), out_path = dir.file("out.db");
    std::string second;
    {
      auto db = Database::open(in);
      db.write_run(make_run("first", 100, 1));
      second = db.write_run(make_run("second", 200, 1));
      db.write_verdicts(second, {{"k", "unchanged", "history", 1.0, {}, {}, {}, "", 1}});
      // JSON, so every check passes; not a case, so reading the run fails, after the first.
      db.connection().exec(fmt::format(
          "UPDATE cases SET params = '{{\"batch\": \"two\"}}' WHERE run_id = '{}'", second));
    }
    auto out = Database::open(out_path);
    out.write_run(make_run("there", 50, 1));
    const std::string err = error_of([&] { out.merge_from(in); });
    CHECK_MESSAGE(err.starts_with(in + ": table cases, id 2 (run " + second + "): column params"),
                  err);
    CHECK(count(out, "SELECT count(*) FROM runs") == 1);
    CHECK(count(out, "SELECT count(*) FROM cases") == 1);
  }

  TEST_CASE("merge calls a run stored under the same id with other content a conflict") {
    TempDir dir;
    auto run = make_run("c0ffee", 100, 1);
    run.id = "same-id";
    Database::open(dir.file("out.db")).write_run(run);
    auto in = Database::open(dir.file("in.db"));
    in.write_run(make_run("new", 50, 1));
    run.git_commit = "7ed4d5";
    in.write_run(run);
    auto out = Database::open(dir.file("out.db"));
    CHECK(error_of([&] { out.merge_from(in); }) ==
          "input: " + dir.file("in.db") + ": run same-id is already stored in " +
              dir.file("out.db") +
              " with other content (stored: commit c0ffee, branch main, started "
              "1970-01-01T00:00:00Z, status complete, 1 cases, environment " +
              run.env.fingerprint().substr(0, 12) +
              "; the input's: commit 7ed4d5, branch main, started 1970-01-01T00:00:00Z, status "
              "complete, 1 cases, environment " +
              run.env.fingerprint().substr(0, 12) +
              "; first difference at /git_commit): merge it into another history, or remove one "
              "of the two");
    CHECK(count(out, "SELECT count(*) FROM runs") == 1);  // the other run not taken in either
    run.git_commit = "c0ffee";
    auto same = Database::open(dir.file("same.db"));
    same.write_run(run);
    CHECK(out.merge_from(same).runs_present == 1);
  }

  TEST_CASE("a file that is not a database is reported and left byte for byte as it was") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    {
      std::ofstream out(p, std::ios::binary);
      for (int i = 0; i < 512; ++i) out << "garbage!";
    }
    const std::string before = read_bytes(p);
    const std::string expected =
        p +
        ": not an attnprof database (not even an SQLite file); it was left untouched: pass "
        "another --db";
    CHECK(error_of([&] { Database::open(p); }) == expected);
    CHECK(error_of([&] { Database::open(p, Database::Mode::read_only); }) == expected);
    CHECK(read_bytes(p) == before);
    CHECK_FALSE(std::filesystem::exists(p + "-wal"));
  }

  TEST_CASE("a one-byte file is refused, not made into a history") {
    TempDir dir;
    const std::string p = dir.file("u.db");
    std::ofstream(p) << "x";
    const std::string expected =
        p +
        ": not an attnprof database (not even an SQLite file); it was left untouched: pass "
        "another --db";
    CHECK(error_of([&] { Database::open(p); }) == expected);
    CHECK(error_of([&] { Database::open(p, Database::Mode::read_only); }) == expected);
    CHECK(read_bytes(p) == "x");
    CHECK_FALSE(std::filesystem::exists(p + "-wal"));
    CHECK_FALSE(std::filesystem::exists(p + "-shm"));
  }

  TEST_CASE("an SQLite file shorter than a page is refused: SQLite would overwrite it") {
    TempDir dir;
    const std::string p = dir.file("short.db");
    {
      std::ofstream out(p, std::ios::binary);
      out.write("SQLite format 3\0\x10\x00", 18);
      out << std::string(200, '\x01');
    }
    const std::string before = read_bytes(p);
    CHECK(error_of([&] { Database::open(p); }) ==
          p + ": an SQLite file cut short (218 bytes, less than one page of 4096): not a valid "
              "attnprof database; it was left untouched: restore it from a backup or pass "
              "another --db");
    CHECK(read_bytes(p) == before);
  }

  TEST_CASE("a damaged format version in the header is refused by every mode alike") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    Database::open(p).write_run(make_run("c", 1));
    std::string bytes = read_bytes(p);
    bytes[18] = 3;  // SQLite would read this file but refuse to write it
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
    const std::string expected =
        p +
        ": the SQLite header is damaged (file format versions 3 and 2, not 1 or 2): not a valid "
        "attnprof database; it was left untouched: restore it from a backup or pass another --db";
    CHECK(error_of([&] { Database::open(p); }) == expected);
    CHECK(error_of([&] { Database::open(p, Database::Mode::read_only); }) == expected);
    CHECK(read_bytes(p) == bytes);
  }

  TEST_CASE("a directory, a symlink loop and a dangling symlink get one message each") {
    TempDir dir;
    const std::string d = dir.file("folder");
    std::filesystem::create_directory(d);
    for (auto mode : {Database::Mode::read_write, Database::Mode::read_only})
      CHECK(error_of([&] { Database::open(d, mode); }) ==
            d + ": a directory, not a database file; pass a file, such as " + d + "/attnprof.db");
    const std::string a = dir.file("a.db"), b = dir.file("b.db");
    std::filesystem::create_symlink(b, a);
    std::filesystem::create_symlink(a, b);
    for (auto mode : {Database::Mode::read_write, Database::Mode::read_only})
      CHECK(error_of([&] { Database::open(a, mode); }) ==
            a + ": a loop of symbolic links; pass the path of the database itself");
    const std::string dangling = dir.file("dangling.db");
    std::filesystem::create_symlink(dir.file("nowhere.db"), dangling);
    CHECK(error_of([&] { Database::open(dangling); }) ==
          dangling + ": a symbolic link to nothing; pass the path of the database itself");
    CHECK_FALSE(std::filesystem::exists(dir.file("nowhere.db")));
  }

  TEST_CASE("a schema version below 1, or tables that do not match it, are refused untouched") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    {
      auto db = Database::open(p);
      db.write_run(make_run("c", 1));
    }
    {
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      sqlite3_exec(raw, "PRAGMA user_version = -1", nullptr, nullptr, nullptr);
      sqlite3_close(raw);
    }
    std::string before = read_bytes(p);
    const std::string negative =
        p +
        ": schema version -1 is not one attnprof writes (they count up from 1): not an attnprof "
        "history, or damaged; it was left untouched: pass another --db";
    CHECK(error_of([&] { Database::open(p); }) == negative);
    CHECK(error_of([&] { Database::open(p, Database::Mode::read_only); }) == negative);
    CHECK(read_bytes(p) == before);

    const std::string q = dir.file("q.db");
    {
      sqlite3* raw = nullptr;
      sqlite3_open(q.c_str(), &raw);
      sqlite3_exec(raw, "CREATE TABLE runs(id); PRAGMA user_version = 1", nullptr, nullptr,
                   nullptr);
      sqlite3_close(raw);
    }
    before = read_bytes(q);
    const std::string mismatch =
        q +
        ": says schema version 1 but has no table \"cases\": not an attnprof history, or "
        "damaged; it was left untouched: pass another --db";
    CHECK(error_of([&] { Database::open(q); }) == mismatch);
    CHECK(error_of([&] { Database::open(q, Database::Mode::read_only); }) == mismatch);
    CHECK(read_bytes(q) == before);

    // A column the newest migration added, missing: the current version's layout is checked too.
    const std::string r = dir.file("r.db");
    Database::open(r).connection().exec("ALTER TABLE samples DROP COLUMN wait_ns");
    before = read_bytes(r);
    const std::string no_column =
        r + ": says schema version " + std::to_string(store::schema::current_version) +
        " but table \"samples\" has no column \"wait_ns\": not an attnprof history, or damaged; "
        "it was left untouched: pass another --db";
    CHECK(error_of([&] { Database::open(r); }) == no_column);
    CHECK(error_of([&] { Database::open(r, Database::Mode::read_only); }) == no_column);
    CHECK(read_bytes(r) == before);
  }

  TEST_CASE("a corrupt page: open reads past it and changes nothing; check() names the damage") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    {
      auto db = Database::open(p);
      for (int i = 0; i < 4; ++i) db.write_run(make_run("c", i, 4, 2000));
      db.connection().exec("PRAGMA journal_mode = DELETE");
    }
    {
      std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(p) / 2 / 4096 * 4096));
      for (int i = 0; i < 4096; ++i) f.put('\x5a');
    }
    const std::string before = read_bytes(p);
    // Open reads the header and the schema, not every page: a read command costs its answer.
    for (auto mode : {Database::Mode::read_write, Database::Mode::read_only}) {
      auto db = Database::open(p, mode);
      for (auto how : {Database::Check::quick, Database::Check::full}) {
        const std::string err = error_of([&] { db.check(how); });
        CHECK_MESSAGE(err.starts_with(p + ": not a valid attnprof database or corrupt (*** in "
                                          "database main *** "),
                      err);
        CHECK_MESSAGE(err.ends_with("it was left untouched: restore it from a backup or pass "
                                    "another --db"),
                      err);
      }
      // The reads that reach the page end in SQLite's error, named; the others answer.
      int damaged = 0;
      for (const auto& r : db.list_runs()) {
        const std::string err = error_of([&] { db.load_run(r.id); });
        if (err == "no error") continue;
        ++damaged;
        CHECK_MESSAGE(err.starts_with(p + ": not a valid attnprof database or corrupt ("), err);
      }
      CHECK(damaged > 0);
    }
    CHECK(read_bytes(p) == before);  // bytes 18-19 still say rollback journal: no WAL switch
    CHECK_FALSE(std::filesystem::exists(p + "-wal"));
    CHECK_FALSE(std::filesystem::exists(p + "-shm"));
    CHECK_FALSE(std::filesystem::exists(p + "-journal"));
  }

  TEST_CASE("check() passes a sound history and the merge of one") {
    TempDir dir;
    const std::string a = dir.file("a.db");
    Database::open(a).write_run(make_run("c", 1));
    auto db = Database::open(a, Database::Mode::read_only);
    CHECK(error_of([&] { db.check(); }) == "no error");
    CHECK(error_of([&] { db.check(Database::Check::full); }) == "no error");
    CHECK(Database::open(dir.file("out.db")).merge_from(a).runs_added == 1);
  }

  TEST_CASE("merge checks every page of what it takes in before writing any of it") {
    TempDir dir;
    const std::string in = dir.file("in.db");
    {
      auto db = Database::open(in);
      for (int i = 0; i < 4; ++i) db.write_run(make_run("c", i, 4, 2000));
    }
    {
      std::fstream f(in, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(in) - 4096));
      for (int i = 0; i < 4096; ++i) f.put('\x5a');
    }
    const std::string out = dir.file("out.db");
    auto db = Database::open(out);
    db.write_run(make_run("kept", 100));
    const std::string err = error_of([&] { db.merge_from(in); });
    CHECK_MESSAGE(err.starts_with(in + ": not a valid attnprof database or corrupt (*** in "
                                       "database main *** "),
                  err);
    CHECK(db.list_runs().size() == 1);

    // A rollback-journal output stays one: refused for its input, the merge switched nothing.
    const std::string kept = dir.file("kept.db");
    {
      auto k = Database::open(kept);
      k.write_run(make_run("kept", 100));
      k.connection().exec("PRAGMA journal_mode = DELETE");
    }
    const std::string before = read_bytes(kept);
    CHECK(error_of([&] { Database::open(kept).merge_from(in); }) == err);
    CHECK(read_bytes(kept) == before);
    CHECK_FALSE(std::filesystem::exists(kept + "-wal"));
  }

  TEST_CASE("a command that fails before writing leaves the journal mode as it was") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    {
      auto db = Database::open(p);
      db.write_run(make_run("c", 1));
      db.connection().exec("PRAGMA journal_mode = DELETE");
    }
    const std::string before = read_bytes(p);
    REQUIRE(before[18] == 1);  // rollback journal
    try {
      auto db = Database::open(p);
      db.load_run("latest");
      throw util::InputError(util::Diagnostic{"x", 0, 0, "the command failed"});
    } catch (const util::InputError&) {
    }
    CHECK(read_bytes(p) == before);
    CHECK_FALSE(std::filesystem::exists(p + "-wal"));
    // The first write switches to WAL, as every history attnprof writes is.
    Database::open(p).write_run(make_run("d", 2));
    CHECK(read_bytes(p)[18] == 2);
  }

  TEST_CASE("one damaged environments row: every writer refuses the file, readers read the rest") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    std::string good, bad;
    {
      auto db = Database::open(p);
      good = db.write_run(make_run("c", 1));
      auto other = make_run("d", 2);
      other.env = testing::cpu_env("Other CPU");
      bad = db.write_run(other);
      db.connection().exec("UPDATE environments SET fields = '[1,2' WHERE fingerprint = '" +
                           other.env.fingerprint() + "'");
    }
    const std::string before = read_bytes(p);
    const std::string fingerprint =
        Database::open(p, Database::Mode::read_only).find_run(bad)->env_fingerprint;
    const std::string damaged =
        p + ": table environments, fingerprint " + fingerprint +
        ": column fields cannot be read (parse error at line 1, column 5: syntax error while "
        "parsing array - unexpected end of input; expected ']'); the history is damaged: restore "
        "it from a backup, or export what is readable and import it into a new one";
    CHECK(error_of([&] { Database::open(p); }) == damaged);
    CHECK(read_bytes(p) == before);
    auto ro = Database::open(p, Database::Mode::read_only);
    CHECK(ro.load_run(good)->cases.size() == 2);
    CHECK(error_of([&] { ro.load_run(bad); }) == damaged);
    CHECK(error_of([&] { ro.check(); }) == damaged);
  }

  TEST_CASE("a row that breaks the schema's constraints is damage: writers refuse, check names") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    std::string id;
    {
      auto db = Database::open(p);
      id = db.write_run(make_run("c", 1, 1));
      db.add_annotation({0, store::AnnotationKind::accept, "*", id, "", "", "ok", "me", 1});
      db.connection().exec("PRAGMA journal_mode = DELETE");
    }
    auto damage = [&](const char* sql) {
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      // How a writer that went around the constraints, or a flipped byte, leaves a row.
      sqlite3_exec(raw, "PRAGMA ignore_check_constraints = ON", nullptr, nullptr, nullptr);
      REQUIRE(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    };
    const std::string then =
        "; the history is damaged: restore it from a backup, or export what "
        "is readable and import it into a new one";

    damage("UPDATE annotations SET kind = 'bogus'");
    const std::string kind = p +
                             ": table annotations, id 1: column kind cannot be read (\"bogus\" is "
                             "not accept, reset or ignore)" +
                             then;
    std::string before = read_bytes(p);
    CHECK(error_of([&] { Database::open(p); }) == kind);  // annotate, compare, prune, merge -o
    CHECK(read_bytes(p) == before);
    {
      auto ro = Database::open(p, Database::Mode::read_only);
      CHECK(error_of([&] { ro.annotations(); }) == kind);  // was read as "ignore"
      CHECK(error_of([&] { ro.check(); }) == kind);
      // SQLite's integrity_check verifies CHECK constraints only on a writable connection,
      // and check opens the file read-only: the rules are ours to apply.
      CHECK(error_of([&] { ro.check(Database::Check::full); }) == kind);
    }
    damage("UPDATE annotations SET kind = 'accept'");

    damage("UPDATE cases SET params = '{bad'");
    const std::string params =
        p + ": table cases, id 1 (run " + id + "): column params cannot be read (not JSON)" + then;
    before = read_bytes(p);
    CHECK(error_of([&] { Database::open(p); }) == params);
    CHECK(read_bytes(p) == before);
    CHECK(error_of([&] { Database::open(p, Database::Mode::read_only).check(); }) == params);
    damage("UPDATE cases SET params = (SELECT params FROM cases)");  // a no-op: still damaged
    CHECK(error_of([&] { Database::open(dir.file("out.db")).merge_from(p); }) == params);

    // The cost rows are a run's many rows: check() reads them, a writer's open does not.
    auto db = Database::open(dir.file("c.db"));
    const std::string c_id = db.write_run(make_run("c", 1, 1));
    db.connection().exec("UPDATE cost_rows SET kernels = '[1,' WHERE op = 'aten::bmm'");
    CHECK(error_of([&] { db.check(); }) ==
          dir.file("c.db") +
              ": table cost_rows, case_id 1 op aten::bmm: column kernels cannot be read (not "
              "JSON)" +
              then);
  }

  TEST_CASE("a refused WAL-mode file gets no -wal or -shm beside it") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    Database::open(p).write_run(make_run("c", 1));
    {
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
      sqlite3_close(raw);
    }
    REQUIRE_FALSE(std::filesystem::exists(p + "-wal"));
    const std::string before = read_bytes(p);
    for (auto mode : {Database::Mode::read_write, Database::Mode::read_only}) {
      CHECK(error_of([&] { Database::open(p, mode); }).find("schema version 99") !=
            std::string::npos);
      CHECK_FALSE(std::filesystem::exists(p + "-wal"));
      CHECK_FALSE(std::filesystem::exists(p + "-shm"));
    }
    CHECK(read_bytes(p) == before);
  }

  TEST_CASE("a command that fails removes the history it created, and only that") {
    TempDir dir;
    auto fail_with_open = [](const std::string& path, bool write) {
      try {
        auto db = Database::open(path);
        if (write) db.write_run(make_run("c", 1));
        throw util::InputError(util::Diagnostic{"x", 0, 0, "the command failed"});
      } catch (const util::InputError&) {
      }
    };
    const std::string fresh = dir.file("fresh.db");
    fail_with_open(fresh, false);
    CHECK_FALSE(std::filesystem::exists(fresh));
    CHECK_FALSE(std::filesystem::exists(fresh + "-wal"));
    CHECK_FALSE(std::filesystem::exists(fresh + "-shm"));

    const std::string empty = dir.file("empty.db");
    std::ofstream(empty).close();
    fail_with_open(empty, false);
    REQUIRE(std::filesystem::exists(empty));
    CHECK(std::filesystem::file_size(empty) == 0);

    const std::string written = dir.file("written.db");
    fail_with_open(written, true);  // a run was stored before the failure: it stays
    CHECK(Database::open(written, Database::Mode::read_only).list_runs().size() == 1);

    const std::string old = dir.file("old.db");
    Database::open(old);  // succeeded: an empty history is kept
    fail_with_open(old, false);
    CHECK(std::filesystem::exists(old));
    CHECK(std::filesystem::file_size(old) > 0);

    // Another connection has the new file open: it is not ours alone to remove.
    const std::string shared = dir.file("shared.db");
    std::optional<Database> other;
    try {
      auto db = Database::open(shared);
      other.emplace(Database::open(shared));
      throw util::InputError(util::Diagnostic{"x", 0, 0, "the command failed"});
    } catch (const util::InputError&) {
    }
    CHECK(std::filesystem::exists(shared));
    other->write_run(make_run("c", 1));
    CHECK(other->list_runs().size() == 1);
  }

  TEST_CASE("a damaged JSON value in a stored row names the database, table, row and column") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    auto db = Database::open(p);
    const std::string id = db.write_run(make_run("c", 1, 1));
    db.connection().exec("UPDATE cases SET params = '{\"batch\": 1x' WHERE id = 1");
    CHECK(error_of([&] { db.load_run(id); }) ==
          p + ": table cases, id 1 (run " + id +
              "): column params cannot be read (parse error at line 1, column 12: syntax error "
              "while parsing object - invalid literal; last read: '1x'; expected '}'); the "
              "history is damaged: restore it from a backup, or export what is readable and "
              "import it into a new one");
    db.connection().exec("UPDATE cases SET params = '{\"batch\": \"two\"}' WHERE id = 1");
    CHECK(error_of([&] { db.load_run(id); }) ==
          p + ": table cases, id 1 (run " + id +
              "): column params cannot be read (batch: expected an integer, got string \"two\"); "
              "the history is damaged: restore it from a backup, or export what is readable and "
              "import it into a new one");
  }

  TEST_CASE("a run whose id in its row differs from its index entry: named, never a crash") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    std::string id;
    {
      auto db = Database::open(p);
      for (int i = 0; i < 3; ++i) id = db.write_run(make_run("c", i, 1, 3));
      db.connection().exec("PRAGMA journal_mode = DELETE");
    }
    testing::damage_run_row_id(p, id);
    std::string damaged = id;
    damaged.back() = id.back() == 'a' ? 'b' : 'a';
    const std::string named = p + ": run " + damaged +
                              " is in table runs but not in its id index: the history is damaged "
                              "(attnprof check --full names the damage); run \"sqlite3 " +
                              p + " REINDEX\" or restore a backup";
    auto db = Database::open(p, Database::Mode::read_only);
    // export read the listed id back through the index, found nothing and dereferenced it.
    std::ostringstream out;
    const store::PortableStats s = store::export_jsonl(db, out);
    CHECK(s.runs == 2);
    CHECK(s.unreadable == std::vector<std::string>{named});
    CHECK(error_of([&] { db.load_run("latest"); }) == named);
    CHECK(error_of([&] { db.load_run(damaged); }) == named);
    CHECK_FALSE(db.load_run(id));  // the index's id names no row
    CHECK(error_of([&] { db.check(Database::Check::quick); }) == "no error");
    const std::string full = error_of([&] { db.check(Database::Check::full); });
    CHECK_MESSAGE(full.find("missing from index sqlite_autoindex_runs_1") != std::string::npos,
                  full);
    CHECK(error_of([&] { Database::open(dir.file("out.db")).merge_from(p); }) == named);
  }

  TEST_CASE("a listed run that cannot be read back by its id is named, never a crash") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    {
      auto db = Database::open(p);
      db.write_run(make_run("c", 1, 1, 3));
      db.write_run(make_run("c", 2, 1, 3));
    }
    {
      // A NUL inside the id, as a damaged record can hold: SQL's length() stops at it, so a
      // lookup by the id found nothing and export dereferenced the empty result (found by the
      // store's fuzz target).
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      REQUIRE(sqlite3_exec(raw, "UPDATE runs SET id = 'ab' || char(0) || 'cd' WHERE started_ns = 2",
                           nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    }
    const std::string named = p +
                              ": run \"ab\\u0000cd\" is listed but cannot be read back by its id: "
                              "the history is damaged (attnprof check --full names the damage); "
                              "restore it from a backup, or export what is readable and import it "
                              "into a new one";
    auto db = Database::open(p, Database::Mode::read_only);
    std::ostringstream out;
    const store::PortableStats s = store::export_jsonl(db, out);
    CHECK(s.runs == 1);
    CHECK(s.unreadable == std::vector<std::string>{named});
    CHECK(error_of([&] { Database::open(dir.file("out.db")).merge_from(db); }) == named);
  }

  TEST_CASE("a database with a corrupt page is reported when read, not silently returned") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    std::string id;
    {
      auto db = Database::open(p);
      id = db.write_run(make_run("c", 1, 4, 2000));
      db.connection().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    {
      // Overwrite two whole pages in the middle (sample pages) with garbage, keeping the header;
      // SQLite has no checksums, so garbage inside a row's payload would go unnoticed, but a
      // page whose b-tree header is garbage does not.
      std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(p) / 2 / 4096 * 4096));
      for (int i = 0; i < 8192; ++i) f.put('\x5a');
    }
    const std::string err = error_of([&] {
      auto db = Database::open(p, Database::Mode::read_only);
      db.load_run(id);
    });
    CHECK_MESSAGE(err.find(p + ": not a valid attnprof database or corrupt") == 0, err);
  }

  TEST_CASE("a newer schema is refused and the file is not modified") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    {
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      sqlite3_exec(raw, "CREATE TABLE future(x); PRAGMA user_version = 99;", nullptr, nullptr,
                   nullptr);
      sqlite3_close(raw);
    }
    const std::string before = read_bytes(p);
    const std::string expected = p + ": schema version 99 is newer than this attnprof supports (" +
                                 std::to_string(store::schema::current_version) +
                                 "); it was left untouched: use a newer attnprof";
    CHECK(error_of([&] { Database::open(p); }) == expected);
    CHECK(error_of([&] { Database::open(p, Database::Mode::read_only); }) == expected);
    CHECK(read_bytes(p) == before);
  }

  TEST_CASE("someone else's SQLite database is refused and not modified") {
    TempDir dir;
    const std::string p = dir.file("other.db");
    {
      sqlite3* raw = nullptr;
      sqlite3_open(p.c_str(), &raw);
      sqlite3_exec(raw, "CREATE TABLE customers(name); INSERT INTO customers VALUES ('x')", nullptr,
                   nullptr, nullptr);
      sqlite3_close(raw);
    }
    const std::string before = read_bytes(p);
    CHECK(error_of([&] { Database::open(p); }) ==
          p + ": a SQLite database but not an attnprof history (it has tables and no schema "
              "version); it was left untouched: pass another --db");
    CHECK(read_bytes(p) == before);
  }

  TEST_CASE("read-only mode: a missing file is named, writes are refused") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    CHECK(error_of([&] { Database::open(p, Database::Mode::read_only); }) ==
          p + ": no such database; run `attnprof run` first, or pass --db or set ATTNPROF_DB");
    CHECK_FALSE(std::filesystem::exists(p));
    Database::open(p).write_run(make_run("c", 1));
    auto ro = Database::open(p, Database::Mode::read_only);
    CHECK(ro.load_run("latest"));
    CHECK(error_of([&] { ro.write_run(make_run("d", 2)); }) ==
          p + ": opened read-only; cannot write a run");
  }

  TEST_CASE("a WAL-mode history on read-only media is readable; a -wal with commits is named") {
    TempDir dir;
    const std::string folder = dir.file("media");
    std::filesystem::create_directory(folder);
    const std::string p = folder + "/h.db";
    {
      auto db = Database::open(p);
      db.write_run(make_run("c", 1));
      db.write_run(make_run("d", 2));
    }
    REQUIRE(read_bytes(p)[18] == 2);  // WAL, as attnprof writes
    REQUIRE_FALSE(std::filesystem::exists(p + "-wal"));
    const std::string before = read_bytes(p);
    // What history, show, export and compare --no-record read.
    CHECK(on_read_only_media(folder, [&] {
            auto db = Database::open(p, Database::Mode::read_only);
            std::ostringstream out;
            const auto s = store::export_jsonl(db, out);
            return fmt::format("{} runs, latest {}, {} history rows, {} exported",
                               db.list_runs().size(), db.load_run("latest")->git_commit,
                               store::history(db, {}).size(), s.runs);
          }) == "2 runs, latest d, 4 history rows, 2 exported");
    CHECK(on_read_only_media(folder, [&] { return error_of([&] { Database::open(p); }); }) ==
          p + ": database is read-only; check the file's and its folder's permissions, or "
              "pass a writable --db");
    CHECK(read_bytes(p) == before);
    CHECK_FALSE(std::filesystem::exists(p + "-shm"));

    // Commits still in a -wal (a copy taken while a writer had the file open): SQLite can read
    // them only by writing a -shm.
    const std::string q = folder + "/open.db";
    {
      auto db = Database::open(dir.file("live.db"));
      db.write_run(make_run("c", 1));
      std::filesystem::copy_file(dir.file("live.db"), q);
      std::filesystem::copy_file(dir.file("live.db-wal"), q + "-wal");
    }
    CHECK(on_read_only_media(
              folder,
              [&] { return error_of([&] { Database::open(q, Database::Mode::read_only); }); }) ==
          q +
              ": its -wal holds commits not yet in the database file, and SQLite can read "
              "them only by writing " +
              q +
              "-shm, which this folder does not allow "
              "(read-only media?); copy " +
              q + " and " + q +
              "-wal to a writable folder "
              "and pass that --db");
  }

  TEST_CASE("a file without write permission is reported as read-only") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    Database::open(p).write_run(make_run("c", 1));
    namespace fs = std::filesystem;
    // Readable by all, writable by none; its folder open to all (as the user's own folder is
    // to them), so that only the file's permission is in the way.
    fs::permissions(p, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::permissions(dir.path, fs::perms::all);
    CHECK(bound_by_permissions([&] { return error_of([&] { Database::open(p); }); }) ==
          p + ": database is read-only; check the file's and its folder's permissions, or pass a "
              "writable --db");
  }

  TEST_CASE("a writer that cannot get the lock within the busy timeout gets a clear error") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    auto db = Database::open(p, Database::Mode::read_write, {std::chrono::milliseconds(100)});
    sqlite3* other = nullptr;
    sqlite3_open(p.c_str(), &other);
    REQUIRE(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
    CHECK(error_of([&] { db.write_run(make_run("c", 1)); }) ==
          p + ": database is locked by another process (database is locked); retry when that "
              "process finishes");
    sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(other);
    db.write_run(make_run("c", 1));
    CHECK(count(db, "SELECT count(*) FROM runs") == 1);
  }

  TEST_CASE("a database in a folder that does not exist names the folder as the likely cause") {
    TempDir dir;
    const std::string p = dir.file("no/such/folder/h.db");
    CHECK(error_of([&] { Database::open(p); }) ==
          p + ": cannot open database (unable to open database file); check that the folder "
              "exists");
  }

  TEST_CASE("several threads, each with its own connection, lose no run") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    Database::open(p);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        try {
          auto db = Database::open(p);
          for (int i = 0; i < 5; ++i) db.write_run(make_run("t" + std::to_string(t), i, 2, 100));
        } catch (...) {
          ++failures;
        }
      });
    for (auto& th : threads) th.join();
    CHECK(failures == 0);
    auto db = Database::open(p);
    CHECK(count(db, "SELECT count(*) FROM runs") == 20);
    CHECK(count(db, "SELECT count(*) FROM samples") == 20 * 2 * 100);
  }

  TEST_CASE("several processes writing to one file lose no run") {
    TempDir dir;
    const std::string p = dir.file("h.db");  // not created yet: the writers race to create it
    const int writers = 4, each = 8;
    std::vector<pid_t> pids;
    for (int w = 0; w < writers; ++w) {
      pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        int rc = 0;
        try {
          auto db = Database::open(p);
          for (int i = 0; i < each; ++i)
            db.write_run(make_run("w" + std::to_string(w), 1000 * w + i, 3, 200));
        } catch (const std::exception& e) {
          fprintf(stderr, "writer %d: %s\n", w, e.what());
          rc = 1;
        }
        _exit(rc);
      }
      pids.push_back(pid);
    }
    for (pid_t pid : pids) {
      int status = 0;
      waitpid(pid, &status, 0);
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
    auto db = Database::open(p);
    CHECK(count(db, "SELECT count(*) FROM runs") == writers * each);
    CHECK(count(db, "SELECT count(*) FROM samples") == writers * each * 3 * 200);
    CHECK(integrity(p) == "ok");
  }

  TEST_CASE("kill -9 in the middle of a write leaves no partial run and an intact file") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    const std::string kept = Database::open(p).write_run(make_run("before", 1));
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    core::Run doomed = make_run("doomed", 2, 20, 500);
    doomed.id = "doomed-run";
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      try {
        auto db = Database::open(p);
        db.set_before_commit_hook([&] {
          // Every row of the run is written, none committed: tell the parent, wait to die.
          (void)!write(fds[1], "x", 1);
          for (;;) pause();
        });
        db.write_run(doomed);
      } catch (...) {
      }
      _exit(1);
    }
    close(fds[1]);
    char c = 0;
    REQUIRE(read(fds[0], &c, 1) == 1);
    close(fds[0]);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
    CHECK(integrity(p) == "ok");
    auto db = Database::open(p);
    CHECK_FALSE(db.load_run("doomed-run"));
    CHECK(db.load_run(kept));
    CHECK(count(db, "SELECT count(*) FROM runs") == 1);
    CHECK(count(db, "SELECT count(*) FROM cases") == 2);
    CHECK(count(db, "SELECT count(*) FROM samples") == 10);
    // The database keeps working after the crash.
    CHECK(db.write_run(doomed) == "doomed-run");
    CHECK(count(db, "SELECT count(*) FROM samples") == 10 + 20 * 500);
  }

  TEST_CASE("kill -9 at an arbitrary moment of a stream of writes: every stored run is whole") {
    TempDir dir;
    const std::string p = dir.file("h.db");
    Database::open(p);
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      try {
        auto db = Database::open(p);
        for (int i = 0;; ++i) {
          db.write_run(make_run("c", i, 10, 300));
          (void)!write(fds[1], "x", 1);
        }
      } catch (...) {
      }
      _exit(1);
    }
    close(fds[1]);
    char c[2];
    REQUIRE(read(fds[0], c, 1) == 1);
    REQUIRE(read(fds[0], c, 1) == 1);
    usleep(1000 + static_cast<useconds_t>(getpid() % 7) * 1000);  // somewhere inside a write
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    close(fds[0]);
    CHECK(integrity(p) == "ok");
    auto db = Database::open(p);
    CHECK(count(db, "SELECT count(*) FROM runs") >= 2);
    CHECK(count(db,
                "SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM cases c WHERE "
                "c.run_id = r.id) <> 10") == 0);
    CHECK(count(db,
                "SELECT count(*) FROM cases c WHERE (SELECT count(*) FROM samples s WHERE "
                "s.case_id = c.id) <> 300") == 0);
  }
}
