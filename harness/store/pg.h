// A thin layer over libpq, PostgreSQL's C client, for the fleet server (server.h): a connection
// from a postgresql:// URL, statements with text parameters, results read as text. Every
// failure is a pg::Error (util::EnvironmentError, exit 3) naming the server without its
// password. Built without libpq (pg_none.cpp), open() says so and nothing else is reachable.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/util/error.h"

struct pg_conn;  // libpq's PGconn, kept out of this header

namespace attnprof::store::pg {

// Whether this attnprof was built with libpq.
bool available();

// A failed call; sqlstate is PostgreSQL's five-character code ("40P01" a deadlock), empty when
// the connection itself failed.
class Error : public util::EnvironmentError {
 public:
  Error(std::string message, std::string sqlstate)
      : util::EnvironmentError(std::move(message)), m_sqlstate(std::move(sqlstate)) {}
  const std::string& sqlstate() const { return m_sqlstate; }
  // A deadlock or a serialization failure: the transaction may simply be tried again.
  bool retryable() const { return m_sqlstate == "40P01" || m_sqlstate == "40001"; }

 private:
  std::string m_sqlstate;
};

// Every row of a result, each value text (nullopt for NULL).
struct Rows {
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::size_t size() const { return rows.size(); }
  const std::string& text(std::size_t row, std::size_t col) const;  // "" for NULL
};

using Param = std::optional<std::string>;  // nullopt binds NULL

class Connection {
 public:
  // `url`: postgresql://[user[:password]@][host][:port][/dbname][?param=value...], as libpq
  // reads it (host=/a/dir in the query names a Unix socket's folder).
  static Connection open(const std::string& url);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  Connection(Connection&& o) noexcept : m_name(std::move(o.m_name)), m_conn(o.m_conn) {
    o.m_conn = nullptr;
  }
  ~Connection();

  Rows exec(std::string_view sql, const std::vector<Param>& params = {});
  const std::string& name() const { return m_name; }  // the URL, its password masked

 private:
  Connection(std::string name, pg_conn* conn) : m_name(std::move(name)), m_conn(conn) {}
  std::string m_name;
  pg_conn* m_conn = nullptr;
};

// The URL as messages may show it: "postgresql://user:***@host/db".
std::string masked(const std::string& url);
// A postgresql:// or postgres:// URL; otherwise util::InputError naming `option`.
void check_url(const std::string& url, const std::string& option);

}  // namespace attnprof::store::pg
