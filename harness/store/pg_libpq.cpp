// The PostgreSQL layer (pg.h) on libpq: one connection, statements with text parameters
// (PQexecParams: values never spliced into SQL), every result checked, every wait bounded.
#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>

#include <chrono>
#include <memory>

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

// The statement timeout `options` sets ("-c statement_timeout=30s"), in milliseconds; nullopt
// when it sets none. Units as PostgreSQL reads them; a value it would refuse is its to refuse.
std::optional<long> statement_timeout_ms(const std::string& options) {
  const auto at = options.find("statement_timeout=");
  if (at == std::string::npos) return std::nullopt;
  std::size_t used = 0;
  const std::string v = options.substr(at + 18);
  long n = 0;
  try {
    n = std::stol(v, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = v.substr(used, v.find(' ', used) - used);
  if (unit == "s") return n * 1000;
  if (unit == "min") return n * 60'000;
  if (unit == "h") return n * 3'600'000;
  return n;  // "ms" or none
}

}  // namespace

bool available() {
  return true;
}

Settings settings(const std::string& conninfo) {
  char* why = nullptr;
  std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> parsed(
      PQconninfoParse(conninfo.c_str(), &why), PQconninfoFree);
  if (!parsed) {
    const std::string reason = one_line(why ? why : "out of memory");
    PQfreemem(why);
    throw util::InputError(util::Diagnostic{masked(conninfo), 0, 0, redacted(reason, conninfo)});
  }
  Settings out;
  for (const PQconninfoOption* o = parsed.get(); o->keyword; ++o)
    if (o->val) out.parameters.emplace_back(o->keyword, o->val);
  auto find = [&](const char* key) -> std::string* {
    for (auto& [k, v] : out.parameters)
      if (k == key) return &v;
    return nullptr;
  };
  if (const std::string* t = find("connect_timeout"))
    out.connect_timeout_s = std::atoi(t->c_str());
  else
    out.parameters.emplace_back("connect_timeout", std::to_string(out.connect_timeout_s));
  std::string* options = find("options");
  if (!options) options = &out.parameters.emplace_back("options", "").second;
  if (auto ms = statement_timeout_ms(*options))
    out.statement_timeout_ms = *ms;
  else
    *options += fmt::format("{}-c statement_timeout={}", options->empty() ? "" : " ",
                            out.statement_timeout_ms);
  return out;
}

Connection Connection::open(const std::string& url) {
  const std::string name = masked(url);
  const Settings s = settings(url);
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : s.parameters) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = PQconnectdbParams(keys.data(), values.data(), 0);
  if (!conn) throw Error(fmt::format("{}: out of memory connecting", name), "");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = redacted(one_line(PQerrorMessage(conn)), url);
    PQfinish(conn);
    // libpq says only "timeout expired": which timeout, and where it is set.
    if (why.find("timeout expired") != std::string::npos)
      why += fmt::format(
          " (no answer within the connect timeout, {} s; connect_timeout=N in the "
          "URL sets it)",
          s.connect_timeout_s);
    throw Error(fmt::format("{}: cannot connect: {}", name, why), "");
  }
  // Notices ("relation already exists, skipping") are not for the user's log.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  Connection c(name, conn);
  // The server ends a statement after statement_timeout; a server that stops answering
  // altogether (a hung host, a lost network) is bounded here, a little later. A URL that turns
  // the statement timeout off (0) asked for no bound, here either.
  c.m_statement_timeout_ms = s.statement_timeout_ms;
  c.m_wait_ms = s.statement_timeout_ms <= 0
                    ? -1
                    : s.statement_timeout_ms + 1000L * std::max(s.connect_timeout_s, 1);
  return c;
}

Connection::~Connection() {
  if (m_conn) PQfinish(m_conn);
}

Rows Connection::exec(std::string_view sql, const std::vector<Param>& params) {
  if (!m_broken.empty()) throw Error(m_broken, "");
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  const std::string text(sql);
  // Without parameters, the simple protocol: it runs several statements at once (the schema's).
  const int sent = params.empty()
                       ? PQsendQuery(m_conn, text.c_str())
                       : PQsendQueryParams(m_conn, text.c_str(), static_cast<int>(values.size()),
                                           nullptr, values.data(), nullptr, nullptr, 0);
  if (!sent) throw Error(fmt::format("{}: {}", m_name, one_line(PQerrorMessage(m_conn))), "");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(m_wait_ms);
  // Every result of the statements sent: the first failure is the answer, else the last result.
  PGresult* failed = nullptr;
  PGresult* last = nullptr;
  for (;;) {
    while (PQisBusy(m_conn)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd fd{PQsocket(m_conn), POLLIN, 0};
      const int ready = m_wait_ms < 0      ? poll(&fd, 1, -1)
                        : left.count() > 0 ? poll(&fd, 1, static_cast<int>(left.count()))
                                           : 0;
      if (ready == 0) {
        PQclear(failed);
        PQclear(last);
        m_broken = fmt::format(
            "{}: no answer from the server within {} ms (its statement timeout, {} ms, and "
            "the connect timeout after it; options=-c statement_timeout=N in the URL sets the "
            "first): the server or the network is not responding",
            m_name, m_wait_ms, m_statement_timeout_ms);
        throw Error(m_broken, "");
      }
      if (ready < 0 && errno != EINTR) break;
      if (!PQconsumeInput(m_conn)) break;
    }
    PGresult* res = PQgetResult(m_conn);
    if (!res) break;
    const ExecStatusType status = PQresultStatus(res);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY &&
        !failed) {
      failed = res;
      continue;
    }
    PQclear(last);
    last = res;
  }
  if (failed || !last) {
    PQclear(last);
    const char* state = failed ? PQresultErrorField(failed, PG_DIAG_SQLSTATE) : nullptr;
    Error e(fmt::format("{}: {}", m_name,
                        one_line(failed ? PQresultErrorMessage(failed) : PQerrorMessage(m_conn))),
            state ? state : "");
    PQclear(failed);
    throw e;
  }
  Rows out;
  const int n = PQntuples(last), cols = PQnfields(last);
  out.rows.resize(n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < cols; ++c)
      out.rows[r].push_back(PQgetisnull(last, r, c) ? std::nullopt : Param(PQgetvalue(last, r, c)));
  PQclear(last);
  return out;
}

}  // namespace attnprof::store::pg
