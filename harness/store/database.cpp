// The history database (database.h): opening and validating a file, writing runs, cases, A/B
// rounds, annotations and verdicts, reading them back, prune, merge and vacuum.
#include "harness/store/database.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "harness/store/schema.h"
#include "harness/store/serialize.h"
#include "harness/util/error.h"

namespace attnprof::store {

using nlohmann::json;

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int user_version(sql::Connection& db) {
  return static_cast<int>(db.scalar_int("PRAGMA user_version"));
}

// Reads the version and refuses files that are not ours or too new, before anything is written.
int check_version(sql::Connection& db) {
  // One statement, so one snapshot: a writer creating the schema between two reads would make
  // a half-made history look foreign.
  sql::Statement st(db,
                    "SELECT (SELECT user_version FROM pragma_user_version), "
                    "(SELECT count(*) FROM sqlite_master)");
  st.step();
  const int v = static_cast<int>(st.int64(0));
  const std::int64_t tables = st.int64(1);
  st.reset();
  if (v < 0)
    throw util::EnvironmentError(fmt::format(
        "{}: schema version {} is not one attnprof writes (they count up from 1): not an attnprof "
        "history, or damaged; it was left untouched: pass another --db",
        db.path(), v));
  if (v > schema::current_version)
    throw util::EnvironmentError(
        fmt::format("{}: schema version {} is newer than this attnprof supports ({}); it was left "
                    "untouched: use a newer attnprof",
                    db.path(), v, schema::current_version));
  if (v == 0 && tables > 0)
    throw util::EnvironmentError(fmt::format(
        "{}: a SQLite database but not an attnprof history (it has tables and no schema "
        "version); it was left untouched: pass another --db",
        db.path()));
  return v;
}

// Table -> column names, in order.
using Layout = std::map<std::string, std::vector<std::string>>;

Layout layout_of(sql::Connection& db) {
  sql::Statement st(db,
                    "SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p "
                    "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid");
  Layout out;
  while (st.step()) out[st.text(0)].push_back(st.text(1));
  return out;
}

// What schema version v looks like: the migration chain up to v, run on an empty database.
const Layout& expected_layout(int v) {
  static std::mutex mutex;  // threads open databases concurrently
  static std::map<int, Layout> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(v);
  if (it != cache.end()) return it->second;
  sql::Connection mem(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  for (const auto& m : schema::migrations())
    if (m.version <= v) mem.exec(m.sql);
  return cache.emplace(v, layout_of(mem)).first->second;
}

// Everything a command may rely on before it changes the file or reads a row: the version
// (check_version), every page readable (quick_check: b-trees, free list, record formats; the
// cheap half of integrity_check), and the tables and columns of that version. One read
// transaction, so a concurrent migration cannot show a half-made history. Returns the version.
int validate(sql::Connection& db) {
  db.exec("BEGIN");
  struct Rollback {
    sql::Connection& db;
    ~Rollback() { sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr); }
  } end{db};
  const int v = check_version(db);
  if (v == 0) return v;  // a new, empty file (check_version refused one with tables)
  {
    sql::Statement st(db, "PRAGMA quick_check(1)");
    const std::string first = st.step() ? st.text(0) : "no result";
    if (first != "ok")
      throw util::EnvironmentError(
          sql::describe(db.path(), SQLITE_CORRUPT, "quick_check", first.c_str()));
  }
  const Layout have = layout_of(db);
  for (const auto& [table, columns] : expected_layout(v)) {
    auto it = have.find(table);
    std::string missing;
    if (it == have.end())
      missing = fmt::format("has no table \"{}\"", table);
    else
      for (const auto& c : columns)
        if (missing.empty() &&
            std::find(it->second.begin(), it->second.end(), c) == it->second.end())
          missing = fmt::format("table \"{}\" has no column \"{}\"", table, c);
    if (!missing.empty())
      throw util::EnvironmentError(fmt::format(
          "{}: says schema version {} but {}: not an attnprof history, or damaged; it was left "
          "untouched: pass another --db",
          db.path(), v, missing));
  }
  // An older version is migrated: what the later migrations add must not be there already, or
  // the migration would fail half-way through a file it has started to change.
  if (v < schema::current_version) {
    const Layout& next = expected_layout(schema::current_version);
    const Layout& now = expected_layout(v);
    for (const auto& [table, columns] : have) {
      const auto was = now.find(table);
      const auto will = next.find(table);
      if (will == next.end()) continue;  // not ours to judge: no migration touches it
      for (const auto& c : columns)
        if ((was == now.end() ||
             std::find(was->second.begin(), was->second.end(), c) == was->second.end()))
          throw util::EnvironmentError(fmt::format(
              "{}: says schema version {} but has {} of a later version: damaged; it was left "
              "untouched: restore it from a backup, or pass another --db",
              db.path(), v,
              was == now.end() ? fmt::format("table \"{}\"", table)
                               : fmt::format("column \"{}\" in table \"{}\"", c, table)));
    }
  }
  return v;
}

void migrate(sql::Connection& db) {
  for (const auto& m : schema::migrations()) {
    if (user_version(db) >= m.version) continue;
    sql::Transaction tx(db);
    // Another process may have migrated while we waited for the write lock.
    if (user_version(db) >= m.version) continue;
    try {
      db.exec(m.sql);
    } catch (const util::EnvironmentError& e) {
      throw util::EnvironmentError(fmt::format("{} (while migrating to schema version {}: {})",
                                               e.what(), m.version, m.what));
    }
    db.exec(fmt::format("PRAGMA user_version = {}", m.version));
    tx.commit();
  }
}

void set_busy_timeout(sql::Connection& db, std::chrono::milliseconds t) {
  db.check(sqlite3_busy_timeout(db.get(), static_cast<int>(t.count())), "sqlite3_busy_timeout");
}

// Version check, WAL, pragmas, migrations; returns the version the file was at.
int setup_read_write(sql::Connection& db) {
  const int v = validate(db);
  db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON");
  // Migrations before the switch to WAL: one that fails (a file whose tables its version does
  // not explain) rolls back and leaves the file as it was, journal mode included.
  migrate(db);
  // WAL: readers never block the writer and a killed writer leaves only an uncommitted WAL
  // tail, which the next open discards. synchronous=NORMAL keeps that guarantee for process
  // crashes (a power cut may lose the last commits, never consistency).
  {
    sql::Statement wal(db, "PRAGMA journal_mode = WAL");
    std::string got = wal.step() ? wal.text(0) : "";
    if (got != "wal")
      throw util::EnvironmentError(
          fmt::format("{}: cannot switch to WAL journal mode (got \"{}\"); is it on a network "
                      "file system? Use a local disk",
                      db.path(), got));
  }
  return v;
}

const char* kRunColumns =
    "r.id, r.git_commit, r.git_branch, r.pr, r.ci_url, r.status, r.env_fingerprint, "
    "r.started_ns, r.ended_ns, (SELECT count(*) FROM cases c WHERE c.run_id = r.id), "
    "r.pair_id, r.side";

// nlohmann's what() starts with "[json.exception.parse_error.101] "; a reader needs the rest.
std::string json_reason(const json::exception& e) {
  std::string_view w = e.what();
  if (w.starts_with("[json.exception.")) w.remove_prefix(std::min(w.find("] ") + 2, w.size()));
  return std::string(w);
}

// Reads a JSON column of a stored row through `read`; damage (not JSON, or not the shape the
// column holds) names the database, table, row and column instead of a bare parse error.
template <class Read>
auto from_stored_json(const sql::Connection& db, std::string_view table, std::string_view row,
                      std::string_view column, Read&& read) {
  auto damaged = [&](std::string_view reason) {
    return util::EnvironmentError(fmt::format(
        "{}: table {}, {}: column {} cannot be read ({}); the history is damaged: restore it from "
        "a backup, or export what is readable and import it into a new one",
        db.path(), table, row, column, reason));
  };
  try {
    return read();
  } catch (const json::exception& e) {
    throw damaged(json_reason(e));
  } catch (const FieldError& e) {
    throw damaged(e.diagnostics()[0].message);
  }
}

RunInfo read_run_info(const sql::Statement& st) {
  RunInfo r;
  r.id = st.text(0);
  r.git_commit = st.text(1);
  r.git_branch = st.text(2);
  r.pr = st.text(3);
  r.ci_url = st.text(4);
  r.status = st.text(5);
  r.env_fingerprint = st.text(6);
  r.started_ns = st.int64(7);
  r.ended_ns = st.int64(8);
  r.cases = static_cast<int>(st.int64(9));
  r.pair_id = st.text(10);
  r.side = st.text(11);
  return r;
}

}  // namespace

const char* to_string(AnnotationKind k) {
  switch (k) {
    case AnnotationKind::accept:
      return "accept";
    case AnnotationKind::reset:
      return "reset";
    case AnnotationKind::ignore:
      return "ignore";
  }
  return "?";
}

std::optional<AnnotationKind> parse_annotation_kind(std::string_view s) {
  for (auto k : {AnnotationKind::accept, AnnotationKind::reset, AnnotationKind::ignore})
    if (s == to_string(k)) return k;
  return std::nullopt;
}

std::string new_run_id() {
  // UUID v4 text. random_device alone: runs are written rarely, and two CI shards seeded from
  // the clock at the same instant must still differ.
  std::random_device rd;
  std::uint64_t hi = (std::uint64_t(rd()) << 32) | rd(), lo = (std::uint64_t(rd()) << 32) | rd();
  hi = (hi & ~0xf000ull) | 0x4000ull;        // version 4
  lo = (lo & ~(3ull << 62)) | (2ull << 62);  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff,
                     hi & 0xffff, lo >> 48, lo & 0xffffffffffffull);
}

Database Database::open(const std::string& path, Mode mode) {
  return open(path, mode, Options{});
}

namespace {

// What is at a database path before attnprof opens it. Only nothing or an empty file may become
// a new history: SQLite itself would treat a short file of anything as an empty database and
// overwrite it, and follows a directory or a symlink loop to three different errors.
enum class Found { nothing, empty_file, file };

Found inspect(const std::string& path) {
  auto refuse = [&](std::string why) {
    return util::EnvironmentError(fmt::format("{}: {}", path, why));
  };
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    struct stat link {};
    if (err == ENOENT && lstat(path.c_str(), &link) == 0)
      throw refuse("a symbolic link to nothing; pass the path of the database itself");
    if (err == ENOENT) return Found::nothing;
    if (err == ELOOP)
      throw refuse("a loop of symbolic links; pass the path of the database itself");
    throw refuse(fmt::format("cannot look at it ({}); check the path and its folders' permissions",
                             std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode))
    throw refuse(
        fmt::format("a directory, not a database file; pass a file, such as {}/attnprof.db", path));
  if (!S_ISREG(st.st_mode))
    throw refuse("not a regular file (a device, FIFO or socket); pass a database file");
  if (st.st_size == 0) return Found::empty_file;
  unsigned char header[100] = {};
  std::size_t got = 0;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw refuse(fmt::format("cannot read it ({}); check its permissions", std::strerror(errno)));
    in.read(reinterpret_cast<char*>(header), sizeof header);
    got = static_cast<std::size_t>(in.gcount());
  }
  static constexpr char magic[] = "SQLite format 3";  // 16 bytes with its NUL
  if (got < sizeof magic || std::memcmp(header, magic, sizeof magic) != 0)
    throw refuse(
        "not an attnprof database (not even an SQLite file); it was left untouched: pass another "
        "--db");
  // Bytes 18 and 19 are the format versions SQLite writes (1 rollback journal, 2 WAL). SQLite
  // reads a file with a higher one but will not write it: read-only commands would work and the
  // others fail with a permission message; damage is what it is.
  if (got >= 20 && (header[18] < 1 || header[18] > 2 || header[19] < 1 || header[19] > 2))
    throw refuse(
        fmt::format("the SQLite header is damaged (file format versions {} and {}, not 1 "
                    "or 2): not a valid attnprof database; it was left untouched: restore "
                    "it from a backup or pass another --db",
                    header[18], header[19]));
  // A file shorter than one page holds no page: SQLite would take it for an empty database.
  const unsigned page = header[16] << 8 | header[17];
  const std::uintmax_t page_bytes = page == 1 ? 65536 : page;
  if (got < sizeof header || static_cast<std::uintmax_t>(st.st_size) < page_bytes)
    throw refuse(
        fmt::format("an SQLite file cut short ({} bytes, less than one page of {}): not "
                    "a valid attnprof database; it was left untouched: restore it from a "
                    "backup or pass another --db",
                    st.st_size, page_bytes));
  return Found::file;
}

bool exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

// SQLite's files beside a database, and whether each was there before we opened it: a failed
// open removes what it added and nothing else.
struct Beside {
  std::string path;
  Found found;
  bool wal, shm;
  Beside(const std::string& p, Found f)
      : path(p), found(f), wal(exists(p + "-wal")), shm(exists(p + "-shm")) {}

  // After the connection is closed. A -wal we made that still holds frames is kept: SQLite
  // needs it, and it is never ours to judge.
  void remove_added(bool database_too) const {
    std::error_code ec;
    if (!wal && std::filesystem::exists(path + "-wal", ec) &&
        std::filesystem::file_size(path + "-wal", ec) == 0)
      std::filesystem::remove(path + "-wal", ec);
    if (!shm && !std::filesystem::exists(path + "-wal", ec))
      std::filesystem::remove(path + "-shm", ec);
    if (!database_too) return;
    if (found == Found::nothing) std::filesystem::remove(path, ec);
    if (found == Found::empty_file) std::filesystem::resize_file(path, 0, ec);
  }
};

}  // namespace

Database Database::open(const std::string& path, Mode mode, Options options) {
  const Found found = inspect(path);
  if (mode == Mode::read_only && found == Found::nothing)
    throw util::EnvironmentError(fmt::format(
        "{}: no such database; run `attnprof run` first, or pass --db or set ATTNPROF_DB", path));
  const Beside beside(path, found);
  std::optional<sql::Connection> db;
  try {
    if (mode == Mode::read_only) {
      db.emplace(path, SQLITE_OPEN_READONLY);
      set_busy_timeout(*db, options.busy_timeout);
      const int v = validate(*db);
      if (v < schema::current_version) {
        // Queries on an older file: migrate a private copy in memory, never the file.
        sql::Connection mem(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path);
        sqlite3_backup* b = sqlite3_backup_init(mem.get(), "main", db->get(), "main");
        if (!b) mem.fail(sqlite3_errcode(mem.get()), "sqlite3_backup_init");
        int rc = sqlite3_backup_step(b, -1);
        sqlite3_backup_finish(b);
        if (rc != SQLITE_DONE) db->fail(rc, "sqlite3_backup_step");
        mem.exec("PRAGMA foreign_keys = ON");
        migrate(mem);
        return Database(std::move(mem), mode, v, {});
      }
      db->exec("PRAGMA foreign_keys = ON");
      return Database(std::move(*db), mode, v, {});
    }
    db.emplace(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (sqlite3_db_readonly(db->get(), "main") == 1)
      throw util::EnvironmentError(fmt::format(
          "{}: database is read-only; check the file's and its folder's permissions, or pass a "
          "writable --db",
          path));
    set_busy_timeout(*db, options.busy_timeout);
    // Switching a new file to WAL needs a moment of exclusive access, and SQLite answers BUSY
    // at once there (and during WAL recovery) instead of calling the busy handler: when several
    // writers open a new file together, retry the setup until the busy timeout has passed.
    const auto deadline = std::chrono::steady_clock::now() + options.busy_timeout;
    int v = 0;
    for (;;) {
      try {
        v = setup_read_write(*db);
        break;
      } catch (const sql::BusyError&) {
        if (std::chrono::steady_clock::now() >= deadline) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    Created created;
    if (found != Found::file) created = {path, found == Found::nothing, std::uncaught_exceptions()};
    return Database(std::move(*db), mode, v, std::move(created));
  } catch (const sql::BusyError&) {
    throw;  // another process has the file open: whatever is beside it is that process's
  } catch (...) {
    db.reset();
    beside.remove_added(mode == Mode::read_write);
    throw;
  }
}

Database::~Database() {
  if (m_created.path.empty() || !m_db.get() ||
      std::uncaught_exceptions() <= m_created.uncaught_at_open)
    return;
  // The command that created this history failed. Remove it if it holds nothing and no other
  // process has it open: switching out of WAL needs every other connection closed, and the
  // exclusive lock keeps newcomers out until the file is gone.
  sqlite3* raw = m_db.get();
  sqlite3_busy_timeout(raw, 0);
  auto ok = [&](const char* sql) {
    return sqlite3_exec(raw, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
  };
  sqlite3_stmt* st = nullptr;
  bool empty = false;
  if (sqlite3_prepare_v2(raw,
                         "SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM annotations)",
                         -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    empty = sqlite3_column_int64(st, 0) == 0;
  sqlite3_finalize(st);
  if (!empty || !ok("PRAGMA journal_mode = DELETE") || !ok("BEGIN EXCLUSIVE")) return;
  std::error_code ec;
  if (m_created.was_missing)
    std::filesystem::remove(m_created.path, ec);
  else
    std::filesystem::resize_file(m_created.path, 0, ec);
  ok("ROLLBACK");
}

void Database::require_writable(const char* what) const {
  if (m_mode == Mode::read_only)
    throw util::EnvironmentError(fmt::format("{}: opened read-only; cannot {}", m_db.path(), what));
}

void Database::insert_environment(const core::Environment& env) {
  sql::Statement(m_db, "INSERT OR IGNORE INTO environments(fingerprint, fields) VALUES (?, ?)")
      .bind(1, env.fingerprint())
      .bind(2, json(env.fields).dump())
      .run();
}

// One case's rows; inside the caller's transaction.
void Database::insert_case(const std::string& run_id, const core::CaseResult& cr) {
  sql::Statement ins_case(m_db,
                          "INSERT INTO cases(run_id, case_key, kernel, params, status, message, "
                          "backend, max_abs_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  sql::Statement ins_sample(
      m_db,
      "INSERT INTO samples(case_id, idx, ns, at_ns, sm_clock_mhz, dropped) VALUES (?,?,?,?,?,?)");
  sql::Statement ins_summary(
      m_db,
      "INSERT INTO summaries(case_id, n, median_ns, mean_ns, min_ns, max_ns, q1_ns, q3_ns, "
      "ci_low_ns, ci_high_ns, ci_level, converged) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  sql::Statement ins_metric(m_db, "INSERT INTO metrics(case_id, name, value) VALUES (?, ?, ?)");
  sql::Statement ins_cost(
      m_db,
      "INSERT INTO cost_rows(case_id, idx, op, input_shapes, parent, calls, cpu_self_ns, "
      "cpu_total_ns, device_self_ns, device_total_ns, share, bytes_allocated, kernels, launches, "
      "copies, input_dtypes, bytes_freed, kernel_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins_case.bind(1, run_id)
      .bind(2, cr.spec.key)
      .bind(3, cr.spec.kernel)
      .bind(4, to_json(cr.spec).dump())
      .bind(5, core::to_string(cr.status))
      .bind(6, cr.message)
      .bind(7, cr.backend)
      .bind(8, cr.max_abs_error)
      .run();
  const std::int64_t case_id = sqlite3_last_insert_rowid(m_db.get());
  for (std::size_t i = 0; i < cr.samples.size(); ++i) {
    const auto& s = cr.samples[i];
    ins_sample.bind(1, case_id)
        .bind(2, static_cast<std::int64_t>(i))
        .bind(3, s.ns)
        .bind(4, s.at_ns)
        .bind(5, s.sm_clock_mhz)
        .bind(6, s.dropped ? 1 : 0)
        .run();
  }
  const auto& s = cr.summary;
  ins_summary.bind(1, case_id)
      .bind(2, s.n)
      .bind(3, s.median_ns)
      .bind(4, s.mean_ns)
      .bind(5, s.min_ns)
      .bind(6, s.max_ns)
      .bind(7, s.q1_ns)
      .bind(8, s.q3_ns)
      .bind(9, s.ci_low_ns)
      .bind(10, s.ci_high_ns)
      .bind(11, s.ci_level)
      .bind(12, s.converged ? 1 : 0)
      .run();
  for (const auto& [name, value] : cr.metrics)
    ins_metric.bind(1, case_id).bind(2, name).bind(3, value).run();
  for (std::size_t i = 0; i < cr.cost.size(); ++i) {
    const auto& r = cr.cost[i];
    ins_cost.bind(1, case_id)
        .bind(2, static_cast<std::int64_t>(i))
        .bind(3, r.op)
        .bind(4, r.input_shapes)
        .bind(5, r.parent)
        .bind(6, r.calls)
        .bind(7, r.cpu_self_ns)
        .bind(8, r.cpu_total_ns)
        .bind(9, r.device_self_ns)
        .bind(10, r.device_total_ns)
        .bind(11, r.share)
        .bind(12, r.bytes_allocated)
        .bind(13, to_json(r).at("kernels").dump())
        .bind(14, r.launches)
        .bind(15, r.copies)
        .bind(16, r.input_dtypes)
        .bind(17, r.bytes_freed)
        .bind(18, json(r.kernel_ns).dump())
        .run();
  }
}

std::string Database::write_run(const core::Run& run) {
  require_writable("write a run");
  std::set<std::string> keys;
  for (const auto& c : run.cases)
    if (!keys.insert(c.spec.key).second)
      throw util::InputError(util::Diagnostic{
          "run", 0, 0,
          fmt::format("two cases have the key \"{}\"; case keys must be unique", c.spec.key)});
  const std::string id = run.id.empty() ? new_run_id() : run.id;

  sql::Transaction tx(m_db);
  {
    sql::Statement exists(m_db, "SELECT 1 FROM runs WHERE id = ?");
    if (exists.bind(1, id).step()) return id;  // idempotent: the transaction rolls back
  }
  insert_environment(run.env);
  sql::Statement(m_db,
                 "INSERT INTO runs(id, git_commit, git_branch, pr, ci_url, started_ns, ended_ns, "
                 "status, env_fingerprint, pair_id, side) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, id)
      .bind(2, run.git_commit)
      .bind(3, run.git_branch)
      .bind(4, run.pr)
      .bind(5, run.ci_url)
      .bind(6, run.started_ns)
      .bind(7, run.ended_ns)
      .bind(8, run.status)
      .bind(9, run.env.fingerprint())
      .bind(10, run.pair_id)
      .bind(11, run.side)
      .run();
  for (const auto& cr : run.cases) insert_case(id, cr);
  if (m_before_commit) m_before_commit();
  tx.commit();
  return id;
}

std::string Database::begin_run(const core::Run& run) {
  core::Run header = run;
  header.cases.clear();
  header.status = "incomplete";
  if (header.id.empty()) header.id = new_run_id();
  return write_run(header);
}

void Database::write_case(const std::string& run_id, const core::CaseResult& result) {
  require_writable("write a case");
  sql::Transaction tx(m_db);
  sql::Statement(m_db, "DELETE FROM cases WHERE run_id = ? AND case_key = ?")
      .bind(1, run_id)
      .bind(2, result.spec.key)
      .run();
  insert_case(run_id, result);
  if (m_before_commit) m_before_commit();
  tx.commit();
}

void Database::finish_run(const std::string& run_id, std::int64_t ended_ns,
                          const core::Environment& env, const std::string& status) {
  require_writable("finish a run");
  sql::Transaction tx(m_db);
  insert_environment(env);
  sql::Statement(m_db, "UPDATE runs SET ended_ns = ?, env_fingerprint = ?, status = ? WHERE id = ?")
      .bind(1, ended_ns)
      .bind(2, env.fingerprint())
      .bind(3, status)
      .bind(4, run_id)
      .run();
  m_db.exec("DELETE FROM environments WHERE fingerprint NOT IN (SELECT env_fingerprint FROM runs)");
  tx.commit();
}

std::optional<std::string> Database::latest_incomplete_run() {
  sql::Statement st(m_db,
                    "SELECT id FROM runs WHERE status = 'incomplete' "
                    "ORDER BY started_ns DESC, rowid DESC LIMIT 1");
  if (st.step()) return st.text(0);
  return std::nullopt;
}

void Database::write_rounds(const std::string& pair_id, const std::vector<AbRound>& rounds) {
  require_writable("write A/B rounds");
  sql::Transaction tx(m_db);
  sql::Statement ins(m_db,
                     "INSERT OR REPLACE INTO ab_rounds(pair_id, case_key, round, base_first, "
                     "base_ns, head_ns, base_n, head_n, at_ns, pass) VALUES (?,?,?,?,?,?,?,?,?,?)");
  for (const auto& r : rounds)
    ins.bind(1, pair_id)
        .bind(2, r.case_key)
        .bind(3, r.round)
        .bind(4, r.base_first ? 1 : 0)
        .bind(5, r.base_ns)
        .bind(6, r.head_ns)
        .bind(7, r.base_n)
        .bind(8, r.head_n)
        .bind(9, r.at_ns)
        .bind(10, r.pass)
        .run();
  tx.commit();
}

std::vector<AbRound> Database::rounds(const std::string& pair_id) {
  std::vector<AbRound> out;
  sql::Statement st(m_db,
                    "SELECT case_key, round, base_first, base_ns, head_ns, base_n, head_n, at_ns, "
                    "pass FROM ab_rounds WHERE pair_id = ? ORDER BY case_key, round");
  st.bind(1, pair_id);
  while (st.step()) {
    AbRound r;
    r.case_key = st.text(0);
    r.round = static_cast<int>(st.int64(1));
    r.base_first = st.int64(2) != 0;
    r.base_ns = st.real(3);
    r.head_ns = st.real(4);
    r.base_n = static_cast<int>(st.int64(5));
    r.head_n = static_cast<int>(st.int64(6));
    r.at_ns = st.int64(7);
    r.pass = static_cast<int>(st.int64(8));
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<std::pair<RunInfo, RunInfo>> Database::find_pair(const std::string& ref) {
  std::string pair_id;
  if (ref == "latest") {
    sql::Statement st(m_db,
                      "SELECT pair_id FROM runs WHERE pair_id <> '' "
                      "ORDER BY started_ns DESC, rowid DESC LIMIT 1");
    if (!st.step()) return std::nullopt;
    pair_id = st.text(0);
  } else {
    sql::Statement st(m_db,
                      "SELECT DISTINCT pair_id FROM runs WHERE pair_id <> '' AND "
                      "substr(pair_id, 1, length(?1)) = ?1 LIMIT 2");
    st.bind(1, ref);
    std::vector<std::string> found;
    while (st.step()) found.push_back(st.text(0));
    if (found.empty()) return std::nullopt;
    if (found.size() > 1)
      throw util::InputError(util::Diagnostic{
          "--pair", 0, 0,
          fmt::format("\"{}\" names more than one A/B pair; give more of it", ref)});
    pair_id = found.front();
  }
  std::optional<RunInfo> base, head;
  sql::Statement st(m_db, fmt::format("SELECT {} FROM runs r WHERE r.pair_id = ?", kRunColumns));
  st.bind(1, pair_id);
  while (st.step()) {
    RunInfo info = read_run_info(st);
    (info.side == "base" ? base : head) = info;
  }
  if (!base || !head) return std::nullopt;
  return std::make_pair(*base, *head);
}

bool Database::has_run(const std::string& id) {
  sql::Statement st(m_db, "SELECT 1 FROM runs WHERE id = ?");
  return st.bind(1, id).step();
}

std::vector<std::string> pair_ids(const std::vector<RunInfo>& runs) {
  std::vector<std::string> ids;
  for (const auto& info : runs)
    if (!info.pair_id.empty() && std::find(ids.begin(), ids.end(), info.pair_id) == ids.end())
      ids.push_back(info.pair_id);
  return ids;
}

bool Database::has_pair(const std::string& pair_id) {
  if (pair_id.empty()) return false;
  sql::Statement st(m_db, "SELECT 1 FROM runs WHERE pair_id = ? LIMIT 1");
  return st.bind(1, pair_id).step();
}

std::optional<std::string> Database::resolve(const std::string& ref) {
  if (ref == "latest") {
    sql::Statement st(m_db,
                      "SELECT id FROM runs WHERE status = 'complete' "
                      "ORDER BY started_ns DESC, rowid DESC LIMIT 1");
    if (st.step()) return st.text(0);
    return std::nullopt;
  }
  if (ref.empty()) return std::nullopt;
  // substr instead of LIKE: a ref holding % or _ must match literally.
  sql::Statement st(m_db,
                    "SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT 3");
  st.bind(1, ref);
  std::vector<std::string> ids;
  while (st.step()) ids.push_back(st.text(0));
  if (ids.empty()) return std::nullopt;
  for (const auto& i : ids)
    if (i == ref) return i;
  if (ids.size() > 1)
    throw util::InputError(
        util::Diagnostic{"run", 0, 0,
                         fmt::format("\"{}\" matches several runs ({}, {}{}); give more of the id",
                                     ref, ids[0], ids[1], ids.size() > 2 ? ", ..." : "")});
  return ids[0];
}

std::optional<RunInfo> Database::find_run(const std::string& ref) {
  auto id = resolve(ref);
  if (!id) return std::nullopt;
  sql::Statement st(m_db, fmt::format("SELECT {} FROM runs r WHERE r.id = ?", kRunColumns));
  if (!st.bind(1, *id).step()) return std::nullopt;
  return read_run_info(st);
}

std::vector<RunInfo> Database::list_runs(const RunFilter& f) {
  sql::Statement st(m_db, fmt::format("SELECT {} FROM runs r WHERE (?1 = '' OR r.git_branch = ?1) "
                                      "AND substr(r.env_fingerprint, 1, length(?2)) = ?2 "
                                      "AND (?3 IS NULL OR r.started_ns >= ?3) "
                                      "AND (?4 IS NULL OR r.started_ns <= ?4) "
                                      "AND (?5 = 0 OR r.status = 'complete') "
                                      "ORDER BY r.started_ns, r.rowid",
                                      kRunColumns));
  st.bind(1, f.branch).bind(2, f.env_fingerprint).bind(3, f.since_ns).bind(4, f.until_ns);
  st.bind(5, f.complete_only ? 1 : 0);
  std::vector<RunInfo> out;
  while (st.step()) out.push_back(read_run_info(st));
  return out;
}

std::optional<core::Run> Database::load_run(const std::string& ref) {
  auto info = find_run(ref);
  if (!info) return std::nullopt;
  core::Run run;
  run.id = info->id;
  run.git_commit = info->git_commit;
  run.git_branch = info->git_branch;
  run.pr = info->pr;
  run.ci_url = info->ci_url;
  run.started_ns = info->started_ns;
  run.ended_ns = info->ended_ns;
  run.status = info->status;
  run.pair_id = info->pair_id;
  run.side = info->side;
  {
    sql::Statement st(m_db, "SELECT fields FROM environments WHERE fingerprint = ?");
    if (st.bind(1, info->env_fingerprint).step())
      run.env.fields = from_stored_json(
          m_db, "environments", fmt::format("fingerprint {}", info->env_fingerprint), "fields",
          [&] { return json::parse(st.text(0)).get<std::map<std::string, std::string>>(); });
  }
  std::map<std::int64_t, std::size_t> index;  // case id -> position in run.cases
  {
    sql::Statement st(m_db,
                      "SELECT id, params, status, message, backend, max_abs_error FROM cases "
                      "WHERE run_id = ? ORDER BY id");
    st.bind(1, run.id);
    while (st.step()) {
      core::CaseResult cr;
      cr.spec = from_stored_json(m_db, "cases", fmt::format("id {} (run {})", st.int64(0), run.id),
                                 "params", [&] { return case_from_json(json::parse(st.text(1))); });
      auto status = core::parse_case_status(st.text(2));
      cr.status = status.value_or(core::CaseStatus::error);
      cr.message = st.text(3);
      cr.backend = st.text(4);
      cr.max_abs_error = st.opt_real(5);
      index[st.int64(0)] = run.cases.size();
      run.cases.push_back(std::move(cr));
    }
  }
  auto each = [&](const char* sql, auto&& fn) {
    sql::Statement st(m_db, sql);
    st.bind(1, run.id);
    while (st.step()) {
      // Only a damaged index (which quick_check does not compare with its table) can return a
      // row of another run here.
      auto it = index.find(st.int64(0));
      if (it == index.end())
        throw util::EnvironmentError(fmt::format(
            "{}: case {} of run {} is not among the run's cases: an index is damaged; run "
            "\"sqlite3 {} REINDEX\" or restore a backup",
            m_db.path(), st.int64(0), run.id, m_db.path()));
      fn(run.cases[it->second], st);
    }
  };
  each(
      "SELECT case_id, ns, at_ns, sm_clock_mhz, dropped FROM samples WHERE case_id IN "
      "(SELECT id FROM cases WHERE run_id = ?) ORDER BY case_id, idx",
      [](core::CaseResult& cr, const sql::Statement& st) {
        core::Sample s;
        s.ns = st.int64(1);
        s.at_ns = st.int64(2);
        s.sm_clock_mhz = st.opt_real(3);
        s.dropped = st.int64(4) != 0;
        cr.samples.push_back(s);
      });
  each(
      "SELECT case_id, n, median_ns, mean_ns, min_ns, max_ns, q1_ns, q3_ns, ci_low_ns, "
      "ci_high_ns, ci_level, converged FROM summaries WHERE case_id IN "
      "(SELECT id FROM cases WHERE run_id = ?)",
      [](core::CaseResult& cr, const sql::Statement& st) {
        auto& s = cr.summary;
        s.n = static_cast<int>(st.int64(1));
        s.median_ns = st.real(2);
        s.mean_ns = st.real(3);
        s.min_ns = st.real(4);
        s.max_ns = st.real(5);
        s.q1_ns = st.real(6);
        s.q3_ns = st.real(7);
        s.ci_low_ns = st.real(8);
        s.ci_high_ns = st.real(9);
        s.ci_level = st.real(10);
        s.converged = st.int64(11) != 0;
      });
  each(
      "SELECT case_id, name, value FROM metrics WHERE case_id IN "
      "(SELECT id FROM cases WHERE run_id = ?)",
      [](core::CaseResult& cr, const sql::Statement& st) { cr.metrics[st.text(1)] = st.real(2); });
  each(
      "SELECT case_id, op, input_shapes, parent, calls, cpu_self_ns, cpu_total_ns, "
      "device_self_ns, device_total_ns, share, bytes_allocated, kernels, launches, copies, "
      "input_dtypes, bytes_freed, kernel_ns FROM cost_rows "
      "WHERE case_id IN (SELECT id FROM cases WHERE run_id = ?) ORDER BY case_id, idx",
      [this](core::CaseResult& cr, const sql::Statement& st) {
        const std::string row = fmt::format("case_id {} op {}", st.int64(0), st.text(1));
        core::CostRow r = from_stored_json(m_db, "cost_rows", row, "kernels", [&] {
          return cost_row_from_json({{"kernels", json::parse(st.text(11))}});
        });
        r.kernel_ns = from_stored_json(m_db, "cost_rows", row, "kernel_ns", [&] {
          return cost_row_from_json({{"kernel_ns", json::parse(st.text(16))}}).kernel_ns;
        });
        r.op = st.text(1);
        r.input_shapes = st.text(2);
        r.parent = st.text(3);
        r.calls = static_cast<int>(st.int64(4));
        r.cpu_self_ns = st.real(5);
        r.cpu_total_ns = st.real(6);
        r.device_self_ns = st.real(7);
        r.device_total_ns = st.real(8);
        r.share = st.real(9);
        r.bytes_allocated = st.int64(10);
        r.launches = static_cast<int>(st.int64(12));
        r.copies = static_cast<int>(st.int64(13));
        r.input_dtypes = st.text(14);
        r.bytes_freed = st.int64(15);
        cr.cost.push_back(std::move(r));
      });
  return run;
}

std::int64_t Database::add_annotation(const Annotation& a) {
  require_writable("add an annotation");
  auto bad = [](std::string m) {
    return util::InputError(util::Diagnostic{"annotation", 0, 0, m});
  };
  if (a.reason.empty()) throw bad("a reason is required");
  if (a.author.empty()) throw bad("an author is required");
  if (a.case_glob.empty()) throw bad("a case glob is required (\"*\" for every case)");
  sql::Statement st(m_db,
                    "INSERT OR IGNORE INTO annotations(kind, case_glob, run_id, git_branch, "
                    "env_fingerprint, reason, author, created_ns) VALUES (?,?,?,?,?,?,?,?)");
  st.bind(1, to_string(a.kind))
      .bind(2, a.case_glob)
      .bind(3, a.run_id)
      .bind(4, a.git_branch)
      .bind(5, a.env_fingerprint)
      .bind(6, a.reason)
      .bind(7, a.author)
      .bind(8, a.created_ns ? a.created_ns : now_ns())
      .run();
  return sqlite3_last_insert_rowid(m_db.get());
}

std::vector<Annotation> Database::annotations(const std::string& run_id) {
  sql::Statement st(m_db,
                    "SELECT id, kind, case_glob, run_id, git_branch, env_fingerprint, reason, "
                    "author, created_ns FROM annotations WHERE ?1 = '' OR run_id = ?1 "
                    "ORDER BY created_ns, id");
  st.bind(1, run_id);
  std::vector<Annotation> out;
  while (st.step()) {
    Annotation a;
    a.id = st.int64(0);
    a.kind = parse_annotation_kind(st.text(1)).value_or(AnnotationKind::ignore);
    a.case_glob = st.text(2);
    a.run_id = st.text(3);
    a.git_branch = st.text(4);
    a.env_fingerprint = st.text(5);
    a.reason = st.text(6);
    a.author = st.text(7);
    a.created_ns = st.int64(8);
    out.push_back(std::move(a));
  }
  return out;
}

void Database::write_verdicts(const std::string& run_id, const std::vector<StoredVerdict>& vs) {
  require_writable("write verdicts");
  sql::Transaction tx(m_db);
  if (!has_run(run_id))
    throw util::InputError(
        util::Diagnostic{"run", 0, 0, fmt::format("no run \"{}\" to attach verdicts to", run_id)});
  sql::Statement st(m_db,
                    "INSERT OR REPLACE INTO verdicts(run_id, case_key, verdict, baseline, ratio, "
                    "ci_low, ci_high, p_value, detail, created_ns) VALUES (?,?,?,?,?,?,?,?,?,?)");
  for (const auto& v : vs)
    st.bind(1, run_id)
        .bind(2, v.case_key)
        .bind(3, v.verdict)
        .bind(4, v.baseline)
        .bind(5, v.ratio)
        .bind(6, v.ci_low)
        .bind(7, v.ci_high)
        .bind(8, v.p_value)
        .bind(9, v.detail)
        .bind(10, v.created_ns ? v.created_ns : now_ns())
        .run();
  tx.commit();
}

std::vector<StoredVerdict> Database::verdicts(const std::string& run_id) {
  sql::Statement st(m_db,
                    "SELECT case_key, verdict, baseline, ratio, ci_low, ci_high, p_value, detail, "
                    "created_ns FROM verdicts WHERE run_id = ? ORDER BY case_key, baseline");
  st.bind(1, run_id);
  std::vector<StoredVerdict> out;
  while (st.step()) {
    StoredVerdict v;
    v.case_key = st.text(0);
    v.verdict = st.text(1);
    v.baseline = st.text(2);
    v.ratio = st.opt_real(3);
    v.ci_low = st.opt_real(4);
    v.ci_high = st.opt_real(5);
    v.p_value = st.opt_real(6);
    v.detail = st.text(7);
    v.created_ns = st.int64(8);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<RunInfo> Database::prune(const PrunePolicy& p) {
  if (!p.keep_last && !p.older_than_ns)
    throw util::InputError(util::Diagnostic{
        "prune", 0, 0, "give a retention policy: --keep-last N, --older-than DAYS, or both"});
  if (p.keep_last && *p.keep_last < 0)
    throw util::InputError(util::Diagnostic{"prune", 0, 0, "--keep-last must be 0 or more"});
  if (!p.dry_run) require_writable("prune");
  std::optional<sql::Transaction> tx;
  if (!p.dry_run) tx.emplace(m_db);
  std::vector<RunInfo> victims;
  {
    sql::Statement st(
        m_db, fmt::format("WITH ranked AS (SELECT id, ROW_NUMBER() OVER (PARTITION BY git_branch "
                          "ORDER BY started_ns DESC, rowid DESC) AS rn FROM runs) "
                          "SELECT {} FROM runs r JOIN ranked k ON k.id = r.id "
                          "WHERE (?1 IS NULL OR k.rn > ?1) AND (?2 IS NULL OR r.started_ns < ?2) "
                          "AND r.id NOT IN (SELECT run_id FROM annotations) "
                          "ORDER BY r.started_ns, r.rowid",
                          kRunColumns));
    st.bind(1, p.keep_last).bind(2, p.older_than_ns);
    while (st.step()) victims.push_back(read_run_info(st));
  }
  if (p.dry_run) return victims;
  sql::Statement del(m_db, "DELETE FROM runs WHERE id = ?");
  for (const auto& r : victims) del.bind(1, r.id).run();
  m_db.exec("DELETE FROM environments WHERE fingerprint NOT IN (SELECT env_fingerprint FROM runs)");
  m_db.exec("DELETE FROM ab_rounds WHERE pair_id NOT IN (SELECT pair_id FROM runs)");
  tx->commit();
  return victims;
}

MergeStats Database::merge_from(const std::string& other_path) {
  require_writable("merge into it");
  MergeStats stats;
  Database other = open(other_path, Mode::read_only);
  const auto runs = other.list_runs();
  for (const auto& info : runs) {
    if (has_run(info.id)) {
      ++stats.runs_present;
    } else {
      write_run(*other.load_run(info.id));
      ++stats.runs_added;
    }
    auto vs = other.verdicts(info.id);
    if (!vs.empty()) {
      auto before = verdicts(info.id).size();
      write_verdicts(info.id, vs);
      stats.verdicts_added += static_cast<int>(verdicts(info.id).size() - before);
    }
  }
  for (const auto& a : other.annotations()) {
    auto before = m_db.scalar_int("SELECT count(*) FROM annotations");
    add_annotation(a);
    stats.annotations_added +=
        static_cast<int>(m_db.scalar_int("SELECT count(*) FROM annotations") - before);
  }
  // The rounds of every A/B pair, so the pair can be judged again here (attnprof ab --pair).
  for (const auto& pair : pair_ids(runs)) {
    const auto rounds = other.rounds(pair);
    if (rounds.empty()) continue;
    write_rounds(pair, rounds);
    ++stats.ab_pairs;
  }
  return stats;
}

void Database::vacuum() {
  require_writable("vacuum");
  m_db.exec("VACUUM");
}

}  // namespace attnprof::store
