// History reads (history.h). The shape of every read: list the case keys, then for each key and
// metric one statement that filters, orders and cuts in SQL. A single statement over all keys
// with ROW_NUMBER() would have to number every stored row before it could drop any; per key,
// SQLite can walk an index in time order and stop after N rows.
#include "harness/store/history.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <variant>

#include "harness/core/metric_names.h"
#include "harness/util/error.h"

namespace attnprof::store {

namespace {

using Value = std::variant<std::int64_t, std::string>;

// Above this many stored cases per requested run, a newest-N read walks the runs in time order
// instead of reading every case of the key (see read_sql).
constexpr std::int64_t walk_runs_above = 4;

// The first string after every string that starts with `prefix` in SQLite's BINARY (memcmp)
// order, so `col >= prefix AND col < end` is a prefix match an index can serve; empty when no
// such bound exists (then the lower bound alone is the match).
std::string prefix_end(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (!prefix.empty())
    prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

// Fixed SQL fragments with their parameters' values, numbered from `first` upwards, so the text
// never holds a value from input.
struct Conditions {
  int first;
  std::string sql;
  std::vector<Value> values;

  void add(std::string_view fragment, Value v) {
    sql += fmt::format(fmt::runtime(fragment), first + static_cast<int>(values.size()));
    values.push_back(std::move(v));
  }
  // `column` starts with `prefix`; an empty prefix matches everything.
  void add_prefix(std::string_view column, const std::string& prefix) {
    if (prefix.empty()) return;
    add(fmt::format(" AND {} >= ?{{}}", column), prefix);
    if (std::string end = prefix_end(prefix); !end.empty())
      add(fmt::format(" AND {} < ?{{}}", column), std::move(end));
  }
  void bind(sql::Statement& st) const {
    for (std::size_t i = 0; i < values.size(); ++i)
      std::visit([&](const auto& v) { st.bind(first + static_cast<int>(i), v); }, values[i]);
  }
};

// Prepares each distinct statement once per read, and when asked records its query plan (with
// the same values bound, as the LIKE/GLOB optimisation depends on them).
class Reader {
 public:
  Reader(Database& db, std::vector<QueryPlan>* plans) : m_db(db), m_plans(plans) {}

  template <class Bind>
  sql::Statement& statement(const std::string& text, const Bind& bind) {
    auto it = m_statements.find(text);
    if (it == m_statements.end()) {
      it = m_statements.emplace(text, sql::Statement(m_db.connection(), text)).first;
      if (m_plans) {
        sql::Statement explain(m_db.connection(), "EXPLAIN QUERY PLAN " + text);
        bind(explain);
        QueryPlan plan{text, {}};
        while (explain.step()) plan.steps.push_back(explain.text(3));
        m_plans->push_back(std::move(plan));
      }
    }
    sql::Statement& st = it->second;
    st.reset();
    bind(st);
    return st;
  }
  const std::string& path() const { return m_db.path(); }

 private:
  Database& m_db;
  std::vector<QueryPlan>* m_plans;
  std::map<std::string, sql::Statement> m_statements;
};

// The start time of the first (or last) run whose commit starts with `prefix`.
std::int64_t commit_time(Reader& rd, const std::string& prefix, const std::string& branch,
                         bool first) {
  Conditions c{1, {}, {}};
  c.add_prefix("git_commit", prefix);
  if (!branch.empty()) c.add(" AND git_branch = ?{}", branch);
  auto& st = rd.statement(fmt::format("SELECT {}(started_ns) FROM runs WHERE git_commit <> ''{}",
                                      first ? "MIN" : "MAX", c.sql),
                          [&](sql::Statement& s) { c.bind(s); });
  if (!st.step() || st.is_null(0))
    throw util::InputError(util::Diagnostic{
        "history", 0, 0,
        fmt::format("no run{} has a commit starting with \"{}\"",
                    branch.empty() ? "" : fmt::format(" on branch \"{}\"", branch), prefix)});
  return st.int64(0);
}

// The stored case keys that match `glob`, in BINARY order, one index seek per key (a loose index
// scan: DISTINCT would read every case row of every key). Each step trusts the index to return a
// key after the last one; a damaged index can hand back an earlier key, and the walk would then
// go round forever (a fuzzer found one): a key that does not sort after its predecessor is
// refused as damage. std::string's order is BINARY's (bytes unsigned, then length).
std::vector<std::string> matching_keys(Reader& rd, const std::string& glob) {
  auto& st = rd.statement(
      "WITH RECURSIVE keys(k) AS ("
      " SELECT (SELECT case_key FROM cases WHERE case_key GLOB ?1 ORDER BY case_key LIMIT 1)"
      " UNION ALL"
      " SELECT (SELECT case_key FROM cases WHERE case_key > keys.k AND case_key GLOB ?1"
      "  ORDER BY case_key LIMIT 1) FROM keys WHERE keys.k IS NOT NULL) "
      "SELECT k FROM keys WHERE k IS NOT NULL",
      [&](sql::Statement& s) { s.bind(1, glob); });
  std::vector<std::string> keys;
  while (st.step()) {
    std::string key = st.text(0);
    if (!keys.empty() && key <= keys.back())
      throw util::EnvironmentError(fmt::format(
          "{}: index cases_by_key returned case key \"{}\" after \"{}\": the history is damaged "
          "(attnprof check --full names the damage); run \"sqlite3 {} REINDEX\" or restore a "
          "backup",
          rd.path(), key, keys.back(), rd.path()));
    keys.push_back(std::move(key));
  }
  return keys;
}

// The metric names `pattern` selects for one key, sorted: summary fields from the fixed list, and
// the key's named metrics. A pattern without glob characters names one metric; only a real glob
// has to look at which named metrics the key's cases carry.
std::vector<std::string> metric_names(Reader& rd, const std::string& key,
                                      const std::string& pattern) {
  if (pattern.find_first_of("*?[") == std::string::npos) return {pattern};
  std::vector<std::string> names;
  for (const char* name : summary_metrics)
    if (sqlite3_strglob(pattern.c_str(), name) == 0) names.emplace_back(name);
  if (sqlite3_strglob(pattern.c_str(), core::kMaxAbsErrorMetric) == 0)
    names.emplace_back(core::kMaxAbsErrorMetric);
  auto& st = rd.statement(
      "SELECT DISTINCT metrics.name FROM cases CROSS JOIN metrics "
      "WHERE cases.case_key = ?1 AND metrics.case_id = cases.id AND metrics.name GLOB ?2",
      [&](sql::Statement& s) { s.bind(1, key).bind(2, pattern); });
  while (st.step()) names.push_back(st.text(0));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// One key's values of one metric, newest first, at most ?3 rows (-1: all). ?1 is the key, ?2
// the named metric (unused for summary fields); the filters follow from ?4.
//
// CROSS JOIN fixes SQLite's join order. walk_runs: runs come from an index in started_ns order
// (runs_by_branch when the branch and environment are fixed, runs_by_branch_time with the
// branch only, runs_by_time otherwise), each probing its case of this key through
// UNIQUE(run_id, case_key), until the LIMIT is met: ~N probes for a case in every run. Otherwise
// every case of the key comes from cases_by_key and is sorted: the right order when the key has
// few cases (new ones, or --last larger than its history), where walking runs would probe every
// run of the branch for nothing.
std::string read_sql(const std::string& metric, bool walk_runs, const std::string& conditions) {
  std::string value_table = " CROSS JOIN metrics", value = "metrics.value",
              value_join = "metrics.case_id = cases.id AND metrics.name = ?2";
  for (const char* name : summary_metrics)
    if (metric == name) {
      value_table = " CROSS JOIN summaries";
      value = "summaries." + metric.substr(std::string_view("summary.").size());
      value_join = "summaries.case_id = cases.id";
    }
  if (metric == core::kMaxAbsErrorMetric) {  // a column of the case row itself
    value_table = "";
    value = "cases.max_abs_error";
    value_join = "cases.max_abs_error IS NOT NULL";
  }
  return fmt::format(
      "SELECT runs.id, runs.git_commit, runs.git_branch, runs.env_fingerprint, runs.started_ns, "
      "cases.kernel, cases.status, {} FROM {}{} "
      "WHERE cases.case_key = ?1 AND cases.run_id = runs.id AND {} AND runs.status = 'complete'{} "
      "ORDER BY runs.started_ns DESC, runs.rowid DESC LIMIT ?3",
      value, walk_runs ? "runs CROSS JOIN cases" : "cases CROSS JOIN runs", value_table, value_join,
      conditions);
}

// The environment condition. A prefix that names one environment becomes an equality, which
// runs_by_branch serves in time order; the gate always passes a whole fingerprint. False when
// no stored environment's fingerprint starts with `prefix`.
bool add_environment(Reader& rd, const std::string& prefix, Conditions& c) {
  Conditions e{1, {}, {}};
  e.add_prefix("fingerprint", prefix);
  auto& st = rd.statement("SELECT fingerprint FROM environments WHERE 1" + e.sql,
                          [&](sql::Statement& s) { e.bind(s); });
  std::vector<std::string> fps;
  while (st.step()) fps.push_back(st.text(0));
  if (fps.empty()) return false;
  if (fps.size() == 1)
    c.add(" AND runs.env_fingerprint = ?{}", fps[0]);
  else
    c.add_prefix("runs.env_fingerprint", prefix);
  return true;
}

// The filter's runs and cases as conditions numbered from ?4 (read_sql's own come first), its
// commits resolved to start times; nullopt when no stored environment matches.
std::optional<Conditions> read_conditions(Reader& rd, const HistoryFilter& f) {
  std::optional<std::int64_t> since = f.since_ns, until = f.until_ns;
  if (!f.commit_from.empty()) {
    auto t = commit_time(rd, f.commit_from, f.branch, true);
    since = since ? std::max(*since, t) : t;
  }
  if (!f.commit_to.empty()) {
    auto t = commit_time(rd, f.commit_to, f.branch, false);
    until = until ? std::min(*until, t) : t;
  }
  Conditions c{4, {}, {}};
  if (!f.branch.empty()) c.add(" AND runs.git_branch = ?{}", f.branch);
  if (!f.env_fingerprint.empty() && !add_environment(rd, f.env_fingerprint, c)) return std::nullopt;
  if (since) c.add(" AND runs.started_ns >= ?{}", *since);
  if (until) c.add(" AND runs.started_ns <= ?{}", *until);
  if (!f.kernel.empty()) c.add(" AND cases.kernel = ?{}", f.kernel);
  if (!f.status.empty()) c.add(" AND cases.status = ?{}", f.status);
  return c;
}

// The case keys to read, sorted: the filter's own keys that match its glob, else the stored
// keys that match it.
std::vector<std::string> read_keys(Reader& rd, const HistoryFilter& f) {
  const std::string glob = f.case_glob.empty() ? std::string("*") : f.case_glob;
  if (f.case_keys.empty() && glob.find_first_of("*?[") == std::string::npos)
    return {glob};  // one key by name (trend's usual argument): nothing to list
  if (f.case_keys.empty()) return matching_keys(rd, glob);
  std::vector<std::string> keys;
  for (const auto& k : f.case_keys)
    if (sqlite3_strglob(glob.c_str(), k.c_str()) == 0) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// Whether a newest-`limit` read of `key` walks the runs (read_sql): when the key has more than
// walk_runs_above cases per requested row.
bool walks_runs(Reader& rd, const std::string& key, std::int64_t limit) {
  // Counting stops at the threshold: a key's whole count would cost as much as reading it.
  auto& n =
      rd.statement("SELECT count(*) FROM (SELECT 1 FROM cases WHERE case_key = ?1 LIMIT ?2)",
                   [&](sql::Statement& s) { s.bind(1, key).bind(2, walk_runs_above * limit + 1); });
  return n.step() && n.int64(0) > walk_runs_above * limit;
}

// The rows of a read_sql statement (newest first), appended oldest first.
void append_rows(sql::Statement& st, const std::string& key, const std::string& metric,
                 std::vector<HistoryRow>& rows) {
  const std::size_t begin = rows.size();
  while (st.step()) {
    HistoryRow r;
    r.run_id = st.text(0);
    r.git_commit = st.text(1);
    r.git_branch = st.text(2);
    r.env_fingerprint = st.text(3);
    r.started_ns = st.int64(4);
    r.case_key = key;
    r.kernel = st.text(5);
    r.status = st.text(6);
    r.metric = metric;
    r.value = st.real(7);
    rows.push_back(std::move(r));
  }
  std::reverse(rows.begin() + static_cast<std::ptrdiff_t>(begin), rows.end());
}

std::vector<HistoryRow> read(Database& db, const HistoryFilter& f, std::vector<QueryPlan>* plans) {
  Reader rd(db, plans);
  const std::optional<Conditions> c = read_conditions(rd, f);
  if (!c) return {};
  const std::vector<std::string> keys = read_keys(rd, f);
  const std::int64_t limit = f.last ? std::max(0, *f.last) : -1;
  std::vector<HistoryRow> rows;
  for (const auto& key : keys) {
    const bool walk_runs = limit > 0 && walks_runs(rd, key, limit);
    for (const auto& name : metric_names(rd, key, f.metric)) {
      auto& st = rd.statement(read_sql(name, walk_runs, c->sql), [&](sql::Statement& s) {
        s.bind(1, key).bind(2, name).bind(3, limit);
        c->bind(s);
      });
      append_rows(st, key, name, rows);
    }
  }
  return rows;
}

}  // namespace

std::vector<HistoryRow> history(Database& db, const HistoryFilter& f) {
  return read(db, f, nullptr);
}

std::vector<QueryPlan> explain_history(Database& db, const HistoryFilter& f) {
  std::vector<QueryPlan> plans;
  read(db, f, &plans);
  return plans;
}

std::map<std::pair<std::string, std::string>, core::StabilityFigures> stability_figures(
    Database& db, HistoryFilter filter, bool gpu) {
  using Set = void (*)(core::StabilityFigures&, double);
  std::vector<std::pair<const char*, Set>> figures = {
      {core::kDescheduledMetric, [](core::StabilityFigures& s, double v) { s.descheduled = v; }},
      {core::kDescheduledShiftMetric, [](core::StabilityFigures& s, double v) { s.shift = v; }}};
  if (gpu) {
    figures.push_back(
        {core::kThrottledMetric, [](core::StabilityFigures& s, double v) { s.throttled = v; }});
    figures.push_back({core::kOtherProcessesMetric, [](core::StabilityFigures& s, double v) {
                         s.other_processes = static_cast<int>(v);
                       }});
  }
  std::map<std::pair<std::string, std::string>, core::StabilityFigures> out;
  for (const auto& [name, set] : figures) {
    filter.metric = name;
    for (auto& row : history(db, filter)) set(out[{row.case_key, row.run_id}], row.value);
  }
  return out;
}

}  // namespace attnprof::store
