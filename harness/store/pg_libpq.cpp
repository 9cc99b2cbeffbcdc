// The PostgreSQL layer (pg.h) on libpq: one blocking connection, statements with text
// parameters (PQexecParams: values never spliced into SQL), every result checked.
#include <fmt/format.h>
#include <libpq-fe.h>

#include "harness/store/pg.h"

namespace attnprof::store::pg {

namespace {

// libpq's messages end in a newline and may run over lines; one line reads better in a log.
std::string one_line(const char* message) {
  std::string s = message ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

}  // namespace

bool available() {
  return true;
}

Connection Connection::open(const std::string& url) {
  const std::string name = masked(url);
  PGconn* conn = PQconnectdb(url.c_str());
  if (!conn) throw Error(fmt::format("{}: out of memory connecting", name), "");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = one_line(PQerrorMessage(conn));
    PQfinish(conn);
    throw Error(fmt::format("{}: cannot connect: {}", name, why), "");
  }
  // Notices ("relation already exists, skipping") are not for the user's log.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return Connection(name, conn);
}

Connection::~Connection() {
  if (m_conn) PQfinish(m_conn);
}

Rows Connection::exec(std::string_view sql, const std::vector<Param>& params) {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  const std::string text(sql);
  // Without parameters, PQexec: it runs several statements at once (the schema's).
  PGresult* res = params.empty()
                      ? PQexec(m_conn, text.c_str())
                      : PQexecParams(m_conn, text.c_str(), static_cast<int>(values.size()), nullptr,
                                     values.data(), nullptr, nullptr, 0);
  const ExecStatusType status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    Error e(fmt::format("{}: {}", m_name,
                        one_line(res ? PQresultErrorMessage(res) : PQerrorMessage(m_conn))),
            state ? state : "");
    PQclear(res);
    throw e;
  }
  Rows out;
  const int n = PQntuples(res), cols = PQnfields(res);
  out.rows.resize(n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < cols; ++c)
      out.rows[r].push_back(PQgetisnull(res, r, c) ? std::nullopt : Param(PQgetvalue(res, r, c)));
  PQclear(res);
  return out;
}

}  // namespace attnprof::store::pg
