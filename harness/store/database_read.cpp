// The history database (database.h), looking runs up ("latest", an id or a prefix), listing them
// and loading a whole run with its cases, samples, summaries, metrics and cost rows.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "harness/store/database.h"
#include "harness/store/database_rows.h"
#include "harness/store/serialize.h"
#include "harness/util/error.h"

namespace attnprof::store {

using nlohmann::json;

const char* const kRunColumns =
    "r.id, r.git_commit, r.git_branch, r.pr, r.ci_url, r.status, r.env_fingerprint, "
    "r.started_ns, r.ended_ns, (SELECT count(*) FROM cases c WHERE c.run_id = r.id), "
    "r.pair_id, r.side";

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

namespace {

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
  try {
    return read();
  } catch (const json::exception& e) {
    throw damaged_row(db, table, row, column, json_reason(e));
  } catch (const FieldError& e) {
    throw damaged_row(db, table, row, column, e.diagnostics()[0].message);
  }
}

}  // namespace

util::EnvironmentError damaged_row(const sql::Connection& db, std::string_view table,
                                   std::string_view row, std::string_view column,
                                   std::string_view reason) {
  return util::EnvironmentError(fmt::format(
      "{}: table {}, {}: column {} cannot be read ({}); the history is damaged: restore it from "
      "a backup, or export what is readable and import it into a new one",
      db.path(), table, row, column, reason));
}

std::map<std::string, std::string> environment_fields(const sql::Connection& db,
                                                      std::string_view fingerprint,
                                                      std::string_view fields) {
  return from_stored_json(
      db, "environments", fmt::format("fingerprint {}", fingerprint), "fields",
      [&] { return json::parse(fields).get<std::map<std::string, std::string>>(); });
}

std::optional<std::string> Database::latest_incomplete_run() {
  sql::Statement st(m_db,
                    "SELECT id FROM runs WHERE status = 'incomplete' "
                    "ORDER BY started_ns DESC, rowid DESC LIMIT 1");
  if (st.step()) return st.text(0);
  return std::nullopt;
}

bool Database::has_run(const std::string& id) {
  sql::Statement st(m_db, "SELECT 1 FROM runs WHERE id = ?");
  return st.bind(1, id).step();
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
  // substr instead of LIKE: a ref holding % or _ must match literally. NOT INDEXED: the ids
  // as the rows hold them, which list_runs hands out, not the id index's copy of them (which
  // SQLite would otherwise scan instead, and which damage can make differ).
  sql::Statement st(m_db,
                    "SELECT id FROM runs NOT INDEXED WHERE substr(id, 1, length(?1)) = ?1 "
                    "ORDER BY id LIMIT 3");
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
  if (st.bind(1, *id).step()) return read_run_info(st);
  // resolve() reads the rows; this lookup goes through the id's index. A row that has an id the
  // index lacks is a damaged index (or a run removed in between: then it is gone from the rows
  // too). Callers trust a resolved id, so this must not read as "no such run".
  if (resolve(*id) != id) return std::nullopt;
  throw util::EnvironmentError(fmt::format(
      "{}: run {} is in table runs but not in its id index: the history is damaged (attnprof "
      "check --full names the damage); run \"sqlite3 {} REINDEX\" or restore a backup",
      m_db.path(), *id, m_db.path()));
}

std::vector<RunInfo> Database::list_runs(const RunFilter& f) {
  sql::Statement st(m_db,
                    fmt::format("SELECT {} FROM runs r WHERE (?1 = '' OR r.git_branch = ?1) "
                                "AND substr(r.env_fingerprint, 1, length(?2)) = ?2 "
                                "AND (?3 IS NULL OR r.started_ns >= ?3) "
                                "AND (?4 IS NULL OR r.started_ns <= ?4) "
                                "AND (?5 = 0 OR r.status = 'complete') "
                                "AND (?6 = '[]' OR r.id IN (SELECT value FROM json_each(?6))) "
                                "ORDER BY r.started_ns, r.rowid",
                                kRunColumns));
  st.bind(1, f.branch).bind(2, f.env_fingerprint).bind(3, f.since_ns).bind(4, f.until_ns);
  st.bind(5, f.complete_only ? 1 : 0).bind(6, json(f.ids).dump());
  std::vector<RunInfo> out;
  while (st.step()) out.push_back(read_run_info(st));
  return out;
}

namespace {

// Case id -> position in run.cases.
using CaseIndex = std::map<std::int64_t, std::size_t>;

core::Run run_header(const RunInfo& info) {
  core::Run run;
  run.id = info.id;
  run.git_commit = info.git_commit;
  run.git_branch = info.git_branch;
  run.pr = info.pr;
  run.ci_url = info.ci_url;
  run.started_ns = info.started_ns;
  run.ended_ns = info.ended_ns;
  run.status = info.status;
  run.pair_id = info.pair_id;
  run.side = info.side;
  return run;
}

void read_environment(sql::Connection& db, const std::string& fingerprint, core::Run& run) {
  sql::Statement st(db, "SELECT fields FROM environments WHERE fingerprint = ?");
  if (st.bind(1, fingerprint).step())
    run.env.fields = environment_fields(db, fingerprint, st.text(0));
}

// The run's cases, or with `key` that one case of it.
CaseIndex read_cases(sql::Connection& db, core::Run& run, const std::string* key = nullptr) {
  CaseIndex index;
  sql::Statement st(
      db, fmt::format("SELECT id, params, status, message, backend, max_abs_error, reference, "
                      "kernels FROM cases WHERE run_id = ?{} ORDER BY id",
                      key ? " AND case_key = ?" : ""));
  st.bind(1, run.id);
  if (key) st.bind(2, *key);
  while (st.step()) {
    core::CaseResult cr;
    cr.spec = from_stored_json(db, "cases", fmt::format("id {} (run {})", st.int64(0), run.id),
                               "params", [&] { return case_from_json(json::parse(st.text(1))); });
    auto status = core::parse_case_status(st.text(2));
    cr.status = status.value_or(core::CaseStatus::error);
    cr.message = st.text(3);
    cr.backend = st.text(4);
    cr.max_abs_error = st.opt_real(5);
    cr.reference = st.text(6);
    if (!st.is_null(7))
      cr.kernels = from_stored_json(
          db, "cases", fmt::format("id {} (run {})", st.int64(0), run.id), "kernels",
          [&] { return json::parse(st.text(7)).get<std::vector<std::string>>(); });
    index[st.int64(0)] = run.cases.size();
    run.cases.push_back(std::move(cr));
  }
  return index;
}

// Calls fn(case, row) for each row of `sql` (its first column a case id, its parameter the run).
template <class Fn>
void each_case_row(sql::Connection& db, core::Run& run, const CaseIndex& index, const char* sql,
                   Fn&& fn) {
  sql::Statement st(db, sql);
  st.bind(1, run.id);
  while (st.step()) {
    // Only a damaged index (which quick_check does not compare with its table) can return a
    // row of another run here.
    auto it = index.find(st.int64(0));
    if (it == index.end())
      throw util::EnvironmentError(fmt::format(
          "{}: case {} of run {} is not among the run's cases: an index is damaged; run "
          "\"sqlite3 {} REINDEX\" or restore a backup",
          db.path(), st.int64(0), run.id, db.path()));
    fn(run.cases[it->second], st);
  }
}

void read_samples(sql::Connection& db, core::Run& run, const CaseIndex& index) {
  each_case_row(db, run, index,
                "SELECT case_id, ns, at_ns, sm_clock_mhz, dropped, cpu_ns, invol_switches, wait_ns "
                "FROM "
                "samples WHERE case_id IN (SELECT id FROM cases WHERE run_id = ?) ORDER BY "
                "case_id, idx",
                [](core::CaseResult& cr, const sql::Statement& st) {
                  core::Sample s;
                  s.ns = st.int64(1);
                  s.at_ns = st.int64(2);
                  s.sm_clock_mhz = st.opt_real(3);
                  s.dropped = st.int64(4) != 0;
                  s.cpu_ns = st.opt_int64(5);
                  s.invol_switches = st.opt_int64(6);
                  s.wait_ns = st.opt_int64(7);
                  cr.samples.push_back(s);
                });
}

void read_summaries(sql::Connection& db, core::Run& run, const CaseIndex& index) {
  each_case_row(db, run, index,
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
}

void read_metrics(sql::Connection& db, core::Run& run, const CaseIndex& index) {
  each_case_row(
      db, run, index,
      "SELECT case_id, name, value FROM metrics WHERE case_id IN "
      "(SELECT id FROM cases WHERE run_id = ?)",
      [](core::CaseResult& cr, const sql::Statement& st) { cr.metrics[st.text(1)] = st.real(2); });
}

void read_cost_rows(sql::Connection& db, core::Run& run, const CaseIndex& index) {
  each_case_row(
      db, run, index,
      "SELECT case_id, op, input_shapes, parent, calls, cpu_self_ns, cpu_total_ns, "
      "device_self_ns, device_total_ns, share, bytes_allocated, kernels, launches, copies, "
      "input_dtypes, bytes_freed, kernel_ns FROM cost_rows "
      "WHERE case_id IN (SELECT id FROM cases WHERE run_id = ?) ORDER BY case_id, idx",
      [&db](core::CaseResult& cr, const sql::Statement& st) {
        const std::string row = fmt::format("case_id {} op {}", st.int64(0), st.text(1));
        core::CostRow r = from_stored_json(db, "cost_rows", row, "kernels", [&] {
          return cost_row_from_json({{"kernels", json::parse(st.text(11))}});
        });
        r.kernel_ns = from_stored_json(db, "cost_rows", row, "kernel_ns", [&] {
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
}

}  // namespace

std::optional<core::CaseResult> Database::load_case(const std::string& run_id,
                                                    const std::string& case_key) {
  core::Run run;
  run.id = run_id;
  const CaseIndex index = read_cases(m_db, run, &case_key);
  if (index.empty()) return std::nullopt;
  sql::Statement st(m_db, "SELECT name, value FROM metrics WHERE case_id = ?");
  st.bind(1, index.begin()->first);
  while (st.step()) run.cases[0].metrics[st.text(0)] = st.real(1);
  return std::move(run.cases[0]);
}

core::Run Database::load_listed_run(const std::string& id) {
  if (auto run = load_run(id)) return std::move(*run);
  throw util::EnvironmentError(fmt::format(
      "{}: run {} is listed but cannot be read back by its id: the history is damaged (attnprof "
      "check --full names the damage); restore it from a backup, or export what is readable and "
      "import it into a new one",
      m_db.path(), json(id).dump(-1, ' ', false, json::error_handler_t::replace)));
}

std::optional<core::Run> Database::load_run(const std::string& ref) {
  auto info = find_run(ref);
  if (!info) return std::nullopt;
  core::Run run = run_header(*info);
  read_environment(m_db, info->env_fingerprint, run);
  const CaseIndex index = read_cases(m_db, run);
  read_samples(m_db, run, index);
  read_summaries(m_db, run, index);
  read_metrics(m_db, run, index);
  read_cost_rows(m_db, run, index);
  return run;
}

}  // namespace attnprof::store
