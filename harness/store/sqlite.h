// A thin RAII layer over the SQLite C API for the store. Every call is checked; a failure
// becomes util::EnvironmentError "<path>: <what happened and what to do>" (see describe()).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "harness/util/error.h"

namespace attnprof::store::sql {

// Turns an SQLite result code into a message a user can act on, prefixed with the path.
std::string describe(const std::string& path, int rc, std::string_view call, const char* errmsg);

class Connection;

// SQLITE_BUSY / SQLITE_LOCKED: the only failure worth retrying (see Database::open).
class BusyError : public util::EnvironmentError {
 public:
  using util::EnvironmentError::EnvironmentError;
};

class Statement {
 public:
  Statement(Connection& db, std::string_view sql);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& o) noexcept : m_db(o.m_db), m_stmt(o.m_stmt) { o.m_stmt = nullptr; }
  ~Statement();

  // Binds are 1-based, like SQLite's.
  Statement& bind(int i, std::int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view v);
  Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Statement& bind_null(int i);
  template <class T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }

  bool step();  // true while a row is available
  void run();   // step once, expecting no row
  void reset();

  bool is_null(int col) const;
  std::int64_t int64(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  std::optional<double> opt_real(int col) const;
  std::optional<std::int64_t> opt_int64(int col) const;

 private:
  Connection* m_db;
  sqlite3_stmt* m_stmt = nullptr;
};

class Connection {
 public:
  Connection() = default;
  // flags: SQLITE_OPEN_* ; throws EnvironmentError on failure. Messages name `name`, which is
  // the path unless given: an in-memory copy of a file is named after the file, not ":memory:".
  Connection(std::string path, int flags, std::string name = {});
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  Connection(Connection&& o) noexcept;
  Connection& operator=(Connection&& o) noexcept;
  ~Connection();

  void exec(std::string_view sql);
  [[noreturn]] void fail(int rc, std::string_view call) const;
  void check(int rc, std::string_view call) const {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) fail(rc, call);
  }
  std::int64_t scalar_int(std::string_view sql);
  sqlite3* get() const { return m_db; }
  const std::string& path() const { return m_name; }  // as messages name it

 private:
  std::string m_name;
  sqlite3* m_db = nullptr;
};

// RAII transaction: BEGIN IMMEDIATE (takes the write lock up front, so a busy database waits
// on the busy timeout instead of failing half way), ROLLBACK unless commit() was called.
// Inside another transaction it is a savepoint, so a write that is a transaction of its own
// (write_run) can also be one step of a larger one (import: all lines or none).
class Transaction {
 public:
  explicit Transaction(Connection& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Connection& m_db;
  bool m_nested = false;
  bool m_done = false;
};

}  // namespace attnprof::store::sql
