// A thin layer over libpq, PostgreSQL's C client, for the fleet server (server.h): a connection
// from a postgresql:// URL, statements with text parameters, results read as text. Every
// failure is a pg::Error (util::EnvironmentError, exit 3) naming the server without its
// password. Built without libpq (pg_none.cpp), open() says so and nothing else is reachable.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

// What a connection is opened with: the URL's own parameters as libpq parses them, and a
// default for each bound it leaves out, so that a server that accepts and never answers costs
// a job seconds, not its whole CI timeout.
struct Settings {
  std::vector<std::pair<std::string, std::string>> parameters;  // libpq keyword, value
  int connect_timeout_s = 10;                                   // ?connect_timeout=N overrides
  long statement_timeout_ms = 300000;  // ?options=-c%20statement_timeout%3DN overrides
};
// util::InputError (naming the URL, masked) when libpq cannot parse it.
Settings settings(const std::string& url);

class Connection {
 public:
  // `url`: postgresql://[user[:password]@][host][:port][/dbname][?param=value...], as libpq
  // reads it (host=/a/dir in the query names a Unix socket's folder), with settings()'s
  // defaults. A connect past its timeout, or a statement without an answer past the statement
  // timeout (and the connect timeout after it), is a pg::Error naming that timeout.
  static Connection open(const std::string& url);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  Connection(Connection&& o) noexcept
      : m_name(std::move(o.m_name)),
        m_conn(o.m_conn),
        m_statement_timeout_ms(o.m_statement_timeout_ms),
        m_wait_ms(o.m_wait_ms),
        m_broken(std::move(o.m_broken)) {
    o.m_conn = nullptr;
  }
  ~Connection();

  Rows exec(std::string_view sql, const std::vector<Param>& params = {});
  const std::string& name() const { return m_name; }  // the URL, its password masked

 private:
  Connection(std::string name, pg_conn* conn) : m_name(std::move(name)), m_conn(conn) {}
  std::string m_name;
  pg_conn* m_conn = nullptr;
  long m_statement_timeout_ms = 0;
  long m_wait_ms = 0;    // how long a statement's answer is waited for; -1: no bound
  std::string m_broken;  // why the connection is unusable (an answer never came): every exec's
};

// The URL as messages may show it: "postgresql://user:***@host/db"; a keyword/value string's
// "password=..." and a URL's "?password=..." become "***" too.
std::string masked(const std::string& conninfo);
// A message (libpq's own may quote the string it was given) with every password `conninfo`
// holds replaced by "***".
std::string redacted(std::string message, const std::string& conninfo);
// A postgresql:// or postgres:// URL; otherwise util::InputError naming `option`.
void check_url(const std::string& url, const std::string& option);

}  // namespace attnprof::store::pg
