// The RAII layer over SQLite's C API (sqlite.h): connections, statements and transactions,
// every call checked and a failure described for the user.
#include "harness/store/sqlite.h"

#include <fmt/format.h>

#include "harness/util/error.h"
#include "harness/util/format.h"

namespace attnprof::store::sql {

std::string describe(const std::string& path, int rc, std::string_view call_sql,
                     const char* errmsg) {
  const std::string what =
      util::collapse_whitespace(errmsg && *errmsg ? errmsg : sqlite3_errstr(rc));
  // SQL statements span lines; a message quoting one must stay on one line.
  const std::string call = util::collapse_whitespace(call_sql);
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return fmt::format(
          "{}: not a valid attnprof database or corrupt ({}); it was left untouched: restore it "
          "from a backup or pass another --db",
          path, what);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return fmt::format(
          "{}: database is locked by another process ({}); retry when that process finishes", path,
          what);
    case SQLITE_READONLY:
      return fmt::format(
          "{}: database is read-only ({}); check the file's and its folder's permissions or "
          "pass a writable --db",
          path, what);
    case SQLITE_CANTOPEN:
      return fmt::format("{}: cannot open database ({}); check that the folder exists", path, what);
    case SQLITE_FULL:
      return fmt::format("{}: disk full ({}); free space and retry", path, what);
    default:
      return fmt::format("{}: {} failed: {}", path, call, what);
  }
}

Statement::Statement(Connection& db, std::string_view sql) : m_db(&db) {
  int rc = sqlite3_prepare_v2(db.get(), sql.data(), static_cast<int>(sql.size()), &m_stmt, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, fmt::format("prepare \"{}\"", sql.substr(0, 60)));
}

Statement::~Statement() {
  if (m_stmt) sqlite3_finalize(m_stmt);
}

Statement& Statement::bind(int i, std::int64_t v) {
  m_db->check(sqlite3_bind_int64(m_stmt, i, v), "sqlite3_bind_int64");
  return *this;
}

Statement& Statement::bind(int i, double v) {
  m_db->check(sqlite3_bind_double(m_stmt, i, v), "sqlite3_bind_double");
  return *this;
}

Statement& Statement::bind(int i, std::string_view v) {
  m_db->check(sqlite3_bind_text(m_stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT),
              "sqlite3_bind_text");
  return *this;
}

Statement& Statement::bind_null(int i) {
  m_db->check(sqlite3_bind_null(m_stmt, i), "sqlite3_bind_null");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  m_db->fail(rc, "sqlite3_step");
}

void Statement::run() {
  step();
  reset();
}

void Statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

bool Statement::is_null(int col) const {
  return sqlite3_column_type(m_stmt, col) == SQLITE_NULL;
}
std::int64_t Statement::int64(int col) const {
  return sqlite3_column_int64(m_stmt, col);
}
double Statement::real(int col) const {
  return sqlite3_column_double(m_stmt, col);
}
std::string Statement::text(int col) const {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, col));
  return p ? std::string(p, sqlite3_column_bytes(m_stmt, col)) : std::string();
}
std::optional<double> Statement::opt_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}

std::optional<std::int64_t> Statement::opt_int64(int col) const {
  if (is_null(col)) return std::nullopt;
  return int64(col);
}

Connection::Connection(std::string path, int flags, std::string name)
    : m_name(name.empty() ? path : std::move(name)) {
  int rc = sqlite3_open_v2(path.c_str(), &m_db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = describe(m_name, rc, "sqlite3_open_v2", m_db ? sqlite3_errmsg(m_db) : "");
    sqlite3_close(m_db);
    m_db = nullptr;
    throw util::EnvironmentError(msg);
  }
  sqlite3_extended_result_codes(m_db, 0);
}

Connection::Connection(Connection&& o) noexcept : m_name(std::move(o.m_name)), m_db(o.m_db) {
  o.m_db = nullptr;
}

Connection& Connection::operator=(Connection&& o) noexcept {
  if (this != &o) {
    if (m_db) sqlite3_close(m_db);
    m_name = std::move(o.m_name);
    m_db = o.m_db;
    o.m_db = nullptr;
  }
  return *this;
}

Connection::~Connection() {
  if (m_db) sqlite3_close(m_db);
}

void Connection::fail(int rc, std::string_view call) const {
  std::string msg = describe(m_name, rc, call, m_db ? sqlite3_errmsg(m_db) : nullptr);
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) throw BusyError(msg);
  throw util::EnvironmentError(msg);
}

void Connection::exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(m_db, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = describe(
        m_name, rc, fmt::format("\"{}\"", util::collapse_whitespace(s).substr(0, 60)), err);
    sqlite3_free(err);
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) throw BusyError(msg);
    throw util::EnvironmentError(msg);
  }
}

std::int64_t Connection::scalar_int(std::string_view sql) {
  Statement st(*this, sql);
  return st.step() ? st.int64(0) : 0;
}

Transaction::Transaction(Connection& db)
    : m_db(db), m_nested(sqlite3_get_autocommit(db.get()) == 0) {
  m_db.exec(m_nested ? "SAVEPOINT attnprof" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (m_done) return;
  sqlite3_exec(m_db.get(), m_nested ? "ROLLBACK TO attnprof; RELEASE attnprof" : "ROLLBACK",
               nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  m_db.exec(m_nested ? "RELEASE attnprof" : "COMMIT");
  m_done = true;
}

}  // namespace attnprof::store::sql
