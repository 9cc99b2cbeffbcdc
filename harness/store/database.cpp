// The history database (database.h), opening a file: what is at the path, the version and the
// tables checked before anything is written, migrations, WAL, and removing what a failed command
// created.
#include "harness/store/database.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>
#include <thread>

#include "harness/store/database_rows.h"
#include "harness/store/schema.h"
#include "harness/util/error.h"

namespace attnprof::store {

namespace {

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
  sql::Statement st(db, schema::layout_query);
  Layout out;
  while (st.step()) out[st.text(0)].push_back(st.text(1));
  return out;
}

// What schema version v looks like (schema::layouts(): the migration chain up to v, run on an
// empty database at build time).
Layout expected_layout(int v) {
  Layout out;
  for (const auto& t : schema::layouts()) {
    if (t.version != v) continue;
    std::vector<std::string>& columns = out[t.table];
    for (std::string_view rest = t.columns; !rest.empty();) {
      const std::size_t comma = std::min(rest.find(','), rest.size());
      columns.emplace_back(rest.substr(0, comma));
      rest.remove_prefix(std::min(comma + 1, rest.size()));
    }
  }
  return out;
}

// Everything a command may rely on before it changes the file or reads a row: the version
// (check_version) and the tables and columns of that version. One read transaction, so a
// concurrent migration cannot show a half-made history. Reads the schema, not every page: a
// read command costs its answer, not the file's size (check_pages reads the rest). Returns the
// version.
int validate(sql::Connection& db) {
  db.exec("BEGIN");
  struct Rollback {
    sql::Connection& db;
    ~Rollback() { sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr); }
  } end{db};
  const int v = check_version(db);
  if (v == 0) return v;  // a new, empty file (check_version refused one with tables)
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
    const Layout next = expected_layout(schema::current_version);
    const Layout now = expected_layout(v);
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

// Every migration the file lacks, in one transaction: a failure or a kill half-way leaves it at
// the version it was, never at one between that no attnprof wrote.
void migrate(sql::Connection& db) {
  if (user_version(db) >= schema::current_version) return;
  sql::Transaction tx(db);
  for (const auto& m : schema::migrations()) {
    // Another process may have migrated while we waited for the write lock.
    if (user_version(db) >= m.version) continue;
    try {
      db.exec(m.sql);
    } catch (const util::EnvironmentError& e) {
      throw util::EnvironmentError(fmt::format("{} (while migrating to schema version {}: {})",
                                               e.what(), m.version, m.what));
    }
    db.exec(fmt::format("PRAGMA user_version = {}", m.version));
  }
  tx.commit();
}

void set_busy_timeout(sql::Connection& db, std::chrono::milliseconds t) {
  db.check(sqlite3_busy_timeout(db.get(), static_cast<int>(t.count())), "sqlite3_busy_timeout");
}

// Every page read: quick_check (b-trees, free list, record formats; the cheap half of
// integrity_check) or integrity_check. Refuses a damaged file with SQLite's first complaint.
void check_pages(sql::Connection& db, Database::Check how) {
  const char* pragma =
      how == Database::Check::full ? "PRAGMA integrity_check(1)" : "PRAGMA quick_check(1)";
  sql::Statement st(db, pragma);
  const std::string first = st.step() ? st.text(0) : "no result";
  if (first != "ok")
    throw util::EnvironmentError(sql::describe(
        db.path(), SQLITE_CORRUPT, how == Database::Check::full ? "integrity_check" : "quick_check",
        first.c_str()));
}

// Every stored environment's fields readable: a run written against a damaged one could not be
// read back, so a writer refuses such a history (there are few environments: this is cheap).
void check_environments(sql::Connection& db) {
  sql::Statement st(db, "SELECT fingerprint, fields FROM environments ORDER BY fingerprint");
  while (st.step()) environment_fields(db, st.text(0), st.text(1));
}

// A constraint of the schema, or a JSON column's syntax, that a stored row breaks: SQLite
// checks them only as a row is written, and a damaged page or a writer that went around them
// leaves rows that break them, which readers would otherwise take for data.
struct RowRule {
  const char* table;
  const char* column;
  const char* row;     // SQL naming the row, as readers name it
  const char* bad;     // SQL true for a row that breaks the rule
  const char* reason;  // SQL: why, as a message says it
  bool small;          // a table whose size is its runs' and cases' count, not their samples'
};
constexpr RowRule kRowRules[] = {
    {"annotations", "kind", "'id ' || id", "kind NOT IN ('accept', 'reset', 'ignore')",
     "'\"' || kind || '\" is not accept, reset or ignore'", true},
    {"annotations", "reason", "'id ' || id", "reason = ''", "'empty'", true},
    {"annotations", "author", "'id ' || id", "author = ''", "'empty'", true},
    {"cases", "params", "'id ' || id || ' (run ' || run_id || ')'", "NOT json_valid(params)",
     "'not JSON'", true},
    {"cases", "kernels", "'id ' || id || ' (run ' || run_id || ')'",
     "kernels IS NOT NULL AND NOT json_valid(kernels)", "'not JSON'", true},
    {"cost_rows", "kernels", "'case_id ' || case_id || ' op ' || op", "NOT json_valid(kernels)",
     "'not JSON'", false},
    {"cost_rows", "kernel_ns", "'case_id ' || case_id || ' op ' || op", "NOT json_valid(kernel_ns)",
     "'not JSON'", false},
};

// Every row against kRowRules (with `all` false only the small tables', which a writer checks
// at open); the first row that breaks one is util::EnvironmentError naming it. A rule whose
// column an older schema lacks does not apply.
void check_rows(sql::Connection& db, bool all) {
  for (const RowRule& r : kRowRules) {
    if (!r.small && !all) continue;
    sql::Statement has(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
    if (!has.bind(1, r.table).bind(2, r.column).step()) continue;
    sql::Statement st(
        db, fmt::format("SELECT {}, {} FROM {} WHERE {} LIMIT 1", r.row, r.reason, r.table, r.bad));
    if (st.step()) throw damaged_row(db, r.table, st.text(0), r.column, st.text(1));
  }
}

// Version check, pragmas, migrations (after checking every page of the file they change, its
// environments and its small tables' rows: a writer refuses a damaged one before it changes
// anything, and does not write over it); returns the
// version the file was at. The switch to WAL waits for the first write
// (Database::require_writable).
int setup_read_write(sql::Connection& db) {
  const int v = validate(db);
  db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON");
  if (v > 0 && v < schema::current_version) check_pages(db, Database::Check::quick);
  if (v > 0) check_environments(db);
  if (v > 0) check_rows(db, false);
  migrate(db);
  return v;
}

// Runs `fn` again while SQLite answers BUSY, until `timeout` has passed. Switching a file to WAL
// needs a moment of exclusive access, and SQLite answers BUSY at once there (and during WAL
// recovery) instead of calling the busy handler.
template <class Fn>
auto retry_busy(std::chrono::milliseconds timeout, Fn&& fn) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    try {
      return fn();
    } catch (const sql::BusyError&) {
      if (std::chrono::steady_clock::now() >= deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

// WAL: readers never block the writer and a killed writer leaves only an uncommitted WAL tail,
// which the next open discards. synchronous=NORMAL keeps that guarantee for process crashes (a
// power cut may lose the last commits, never consistency). A file that was there is switched
// before its first write, not at open: a command that fails first leaves the journal mode as it
// was. A file this open creates is switched at once: another connection's hold on it (WAL keeps
// a shared lock) is then what stops a failed command from removing it (~Database).
void switch_to_wal(sql::Connection& db, std::chrono::milliseconds timeout) {
  const std::string got = retry_busy(timeout, [&] {
    sql::Statement wal(db, "PRAGMA journal_mode = WAL");
    return wal.step() ? wal.text(0) : std::string();
  });
  if (got != "wal")
    throw util::EnvironmentError(
        fmt::format("{}: cannot switch to WAL journal mode (got \"{}\"); is it on a network "
                    "file system? Use a local disk",
                    db.path(), got));
}

}  // namespace

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

namespace {

// SQLite's URI for a path ("file:/a/b%3F.db?immutable=1"): the characters a URI gives a
// meaning escaped.
std::string uri_of(const std::string& path, const char* query) {
  std::string out = "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20)
      out += fmt::format("%{:02X}", c);
    else
      out += static_cast<char>(c);
  }
  return out + "?" + query;
}

bool has_frames(const std::string& wal) {
  std::error_code ec;
  return std::filesystem::file_size(wal, ec) > 0 && !ec;
}

// A WAL-mode file can be read only by writing a -shm beside it. Where the folder cannot be
// written (read-only media, or another user's folder), no -shm is there (no process has the
// file open in WAL mode) and no -wal holds commits, the file alone is the history: SQLite reads
// it immutable, without the -shm. A -wal with commits cannot be read that way (immutable skips
// it): refused, saying so, instead of SQLite's "unable to open" that blames the folder.
bool read_immutable(const std::string& path) {
  unsigned char header[20] = {};
  std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(header), sizeof header);
  if (header[18] != 2) return false;  // a rollback-journal file reads without writing beside it
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (access(folder.empty() ? "." : folder.c_str(), W_OK) == 0 || exists(path + "-shm"))
    return false;
  if (has_frames(path + "-wal"))
    throw util::EnvironmentError(fmt::format(
        "{}: its -wal holds commits not yet in the database file, and SQLite can read them only "
        "by writing {}-shm, which this folder does not allow (read-only media?); copy {} and "
        "{}-wal to a writable folder and pass that --db",
        path, path, path, path));
  return true;
}

}  // namespace

Database Database::open_read_only(const std::string& path, Options options) {
  sql::Connection db = read_immutable(path)
                           ? sql::Connection(uri_of(path, "immutable=1"),
                                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, path)
                           : sql::Connection(path, SQLITE_OPEN_READONLY);
  set_busy_timeout(db, options.busy_timeout);
  const int v = validate(db);
  if (v == schema::current_version) {
    db.exec("PRAGMA foreign_keys = ON");
    return Database(std::move(db), Mode::read_only, v, {}, options);
  }
  // Queries on an older (or an empty) file: migrate a private copy in memory, never the file
  // (a read must not take the write lock, nor lock out the older attnprof of another job that
  // shares the file; `attnprof migrate` is that decision). It costs the file's size, every read.
  const auto start = std::chrono::steady_clock::now();
  sqlite3_int64 before = 0, now = 0, peak = 0;
  sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &before, &peak, 1);  // the peak from here on
  if (v > 0) check_pages(db, Check::quick);
  sql::Connection mem(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path);
  sqlite3_backup* b = sqlite3_backup_init(mem.get(), "main", db.get(), "main");
  if (!b) mem.fail(sqlite3_errcode(mem.get()), "sqlite3_backup_init");
  int rc = sqlite3_backup_step(b, -1);
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) db.fail(rc, "sqlite3_backup_step");
  mem.exec("PRAGMA foreign_keys = ON");
  migrate(mem);
  Database out(std::move(mem), Mode::read_only, v, {}, options);
  if (v > 0) {
    sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &now, &peak, 0);
    out.m_upgraded_copy = UpgradedCopy{v, peak - before, std::chrono::steady_clock::now() - start};
  }
  return out;
}

int Database::migrate_in_place(const std::string& path) {
  if (inspect(path) != Found::file)
    throw util::EnvironmentError(fmt::format(
        "{}: no history to migrate (no such file, or an empty one); pass the --db of one", path));
  return open(path, Mode::read_write).opened_at_version();
}

Database Database::open(const std::string& path, Mode mode, Options options) {
  const Found found = inspect(path);
  if (mode == Mode::read_only && found == Found::nothing)
    throw util::EnvironmentError(fmt::format(
        "{}: no such database; run `attnprof run` first, or pass --db or set ATTNPROF_DB", path));
  const Beside beside(path, found);
  std::optional<sql::Connection> db;
  try {
    if (mode == Mode::read_only) return open_read_only(path, options);
    db.emplace(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (sqlite3_db_readonly(db->get(), "main") == 1)
      throw util::EnvironmentError(fmt::format(
          "{}: database is read-only; check the file's and its folder's permissions, or pass a "
          "writable --db",
          path));
    set_busy_timeout(*db, options.busy_timeout);
    // WAL recovery after a killed writer answers BUSY at once; so does a new file's schema when
    // several writers create it together.
    const int v = retry_busy(options.busy_timeout, [&] { return setup_read_write(*db); });
    Created created;
    if (found != Found::file) {
      switch_to_wal(*db, options.busy_timeout);
      created = {path, found == Found::nothing, std::uncaught_exceptions()};
    }
    Database out(std::move(*db), mode, v, std::move(created), options);
    out.m_wal = found != Found::file;
    return out;
  } catch (const sql::BusyError&) {
    throw;  // another process has the file open: whatever is beside it is that process's
  } catch (...) {
    db.reset();
    beside.remove_added(mode == Mode::read_write);
    throw;
  }
}

void Database::check(Check how) {
  check_pages(m_db, how);
  check_environments(m_db);
  check_rows(m_db, true);
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

void Database::require_writable(const char* what) {
  if (m_mode == Mode::read_only)
    throw util::EnvironmentError(fmt::format("{}: opened read-only; cannot {}", m_db.path(), what));
  // Inside a transaction (an import's) SQLite cannot switch: the next write outside one does.
  if (m_wal || sqlite3_get_autocommit(m_db.get()) == 0) return;
  switch_to_wal(m_db, m_options.busy_timeout);
  m_wal = true;
}

}  // namespace attnprof::store
