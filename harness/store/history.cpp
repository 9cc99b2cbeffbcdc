#include "harness/store/history.h"

#include <fmt/format.h>

#include <algorithm>

#include "harness/util/error.h"

namespace attnprof::store {

namespace {

// The start time of the first (or last) run whose commit starts with `prefix`.
std::int64_t commit_time(Database& db, const std::string& prefix, const std::string& branch,
                         bool first) {
  sql::Statement st(db.connection(),
                    fmt::format("SELECT {}(started_ns) FROM runs WHERE git_commit <> '' AND "
                                "substr(git_commit, 1, length(?1)) = ?1 AND (?2 = '' OR "
                                "git_branch = ?2)",
                                first ? "MIN" : "MAX"));
  st.bind(1, prefix).bind(2, branch);
  if (!st.step() || st.is_null(0))
    throw util::InputError(util::Diagnostic{
        "history", 0, 0,
        fmt::format("no run{} has a commit starting with \"{}\"",
                    branch.empty() ? "" : fmt::format(" on branch \"{}\"", branch), prefix)});
  return st.int64(0);
}

}  // namespace

std::vector<HistoryRow> history(Database& db, const HistoryFilter& f) {
  std::optional<std::int64_t> since = f.since_ns, until = f.until_ns;
  if (!f.commit_from.empty()) {
    auto t = commit_time(db, f.commit_from, f.branch, true);
    since = since ? std::max(*since, t) : t;
  }
  if (!f.commit_to.empty()) {
    auto t = commit_time(db, f.commit_to, f.branch, false);
    until = until ? std::min(*until, t) : t;
  }
  // One arm per summary column the metric glob matches (names from the fixed list above), one
  // for the named metrics.
  std::string values;
  for (const char* name : summary_metrics) {
    if (sqlite3_strglob(f.metric.c_str(), name) != 0) continue;
    std::string column = std::string(name).substr(std::string("summary.").size());
    values += fmt::format(
        "SELECT s.case_id, '{}' AS name, s.{} AS value FROM summaries s "
        "JOIN sel ON sel.case_id = s.case_id UNION ALL ",
        name, column);
  }
  values +=
      "SELECT m.case_id, m.name, m.value FROM metrics m JOIN sel ON sel.case_id = m.case_id "
      "WHERE m.name GLOB ?7";
  const std::string sql = fmt::format(
      "WITH sel AS (SELECT c.id AS case_id FROM cases c JOIN runs r ON r.id = c.run_id "
      "  WHERE c.case_key GLOB ?1 AND (?2 = '' OR c.kernel = ?2) AND (?3 = '' OR r.git_branch = ?3)"
      "  AND substr(r.env_fingerprint, 1, length(?4)) = ?4"
      "  AND (?5 IS NULL OR r.started_ns >= ?5) AND (?6 IS NULL OR r.started_ns <= ?6)"
      "  AND (?8 = '' OR c.status = ?8) AND r.status = 'complete'), "
      "vals AS ({}) "
      "SELECT r.id, r.git_commit, r.git_branch, r.env_fingerprint, r.started_ns, c.case_key, "
      "  c.kernel, c.status, v.name, v.value, "
      "  ROW_NUMBER() OVER (PARTITION BY c.case_key, v.name ORDER BY r.started_ns DESC, "
      "  r.rowid DESC) AS newest "
      "FROM vals v JOIN cases c ON c.id = v.case_id JOIN runs r ON r.id = c.run_id "
      "ORDER BY c.case_key, v.name, r.started_ns, r.rowid",
      values);
  sql::Statement st(db.connection(), sql);
  st.bind(1, f.case_glob.empty() ? std::string("*") : f.case_glob)
      .bind(2, f.kernel)
      .bind(3, f.branch)
      .bind(4, f.env_fingerprint)
      .bind(5, since)
      .bind(6, until)
      .bind(7, f.metric)
      .bind(8, f.status);
  std::vector<HistoryRow> rows;
  while (st.step()) {
    if (f.last && st.int64(10) > *f.last) continue;
    HistoryRow r;
    r.run_id = st.text(0);
    r.git_commit = st.text(1);
    r.git_branch = st.text(2);
    r.env_fingerprint = st.text(3);
    r.started_ns = st.int64(4);
    r.case_key = st.text(5);
    r.kernel = st.text(6);
    r.status = st.text(7);
    r.metric = st.text(8);
    r.value = st.real(9);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace attnprof::store
