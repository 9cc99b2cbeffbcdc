// The history database (database.h), writing runs: a whole run in one transaction, or begun,
// stored case by case and finished; the environment and each case's rows.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "harness/store/database.h"
#include "harness/store/serialize.h"
#include "harness/util/error.h"

namespace attnprof::store {

using nlohmann::json;

std::string new_run_id() {
  // UUID v4 text. random_device alone: runs are written rarely, and two CI shards seeded from
  // the clock at the same instant must still differ.
  std::random_device rd;
  std::uint64_t hi = (std::uint64_t(rd()) << 32) | rd(), lo = (std::uint64_t(rd()) << 32) | rd();
  hi = (hi & ~0xf000ull) | 0x4000ull;        // version 4
  lo = (lo & ~(3ull << 62)) | (2ull << 62);  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff,
                     hi & 0xffff, lo >> 48, lo & 0xffffffffffffull);
}

void Database::insert_environment(const core::Environment& env) {
  sql::Statement(m_db, "INSERT OR IGNORE INTO environments(fingerprint, fields) VALUES (?, ?)")
      .bind(1, env.fingerprint())
      .bind(2, json(env.fields).dump())
      .run();
}

namespace {

void insert_samples(sql::Connection& db, std::int64_t case_id, const core::CaseResult& cr) {
  sql::Statement ins(
      db,
      "INSERT INTO samples(case_id, idx, ns, at_ns, sm_clock_mhz, dropped, cpu_ns, invol_switches, "
      "wait_ns) VALUES (?,?,?,?,?,?,?,?,?)");
  for (std::size_t i = 0; i < cr.samples.size(); ++i) {
    const auto& s = cr.samples[i];
    ins.bind(1, case_id)
        .bind(2, static_cast<std::int64_t>(i))
        .bind(3, s.ns)
        .bind(4, s.at_ns)
        .bind(5, s.sm_clock_mhz)
        .bind(6, s.dropped ? 1 : 0)
        .bind(7, s.cpu_ns)
        .bind(8, s.invol_switches)
        .bind(9, s.wait_ns)
        .run();
  }
}

void insert_summary(sql::Connection& db, std::int64_t case_id, const core::Summary& s) {
  sql::Statement(db,
                 "INSERT INTO summaries(case_id, n, median_ns, mean_ns, min_ns, max_ns, q1_ns, "
                 "q3_ns, ci_low_ns, ci_high_ns, ci_level, converged) "
                 "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)")
      .bind(1, case_id)
      .bind(2, s.n)
      .bind(3, s.median_ns)
      .bind(4, s.mean_ns)
      .bind(5, s.min_ns)
      .bind(6, s.max_ns)
      .bind(7, s.q1_ns)
      .bind(8, s.q3_ns)
      .bind(9, s.ci_low_ns)
      .bind(10, s.ci_high_ns)
      .bind(11, s.ci_level)
      .bind(12, s.converged ? 1 : 0)
      .run();
}

void insert_cost_rows(sql::Connection& db, std::int64_t case_id, const core::CaseResult& cr) {
  sql::Statement ins(
      db,
      "INSERT INTO cost_rows(case_id, idx, op, input_shapes, parent, calls, cpu_self_ns, "
      "cpu_total_ns, device_self_ns, device_total_ns, share, bytes_allocated, kernels, launches, "
      "copies, input_dtypes, bytes_freed, kernel_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (std::size_t i = 0; i < cr.cost.size(); ++i) {
    const auto& r = cr.cost[i];
    ins.bind(1, case_id)
        .bind(2, static_cast<std::int64_t>(i))
        .bind(3, r.op)
        .bind(4, r.input_shapes)
        .bind(5, r.parent)
        .bind(6, r.calls)
        .bind(7, r.cpu_self_ns)
        .bind(8, r.cpu_total_ns)
        .bind(9, r.device_self_ns)
        .bind(10, r.device_total_ns)
        .bind(11, r.share)
        .bind(12, r.bytes_allocated)
        .bind(13, to_json(r).at("kernels").dump())
        .bind(14, r.launches)
        .bind(15, r.copies)
        .bind(16, r.input_dtypes)
        .bind(17, r.bytes_freed)
        .bind(18, json(r.kernel_ns).dump())
        .run();
  }
}

}  // namespace

// One case's rows; inside the caller's transaction.
void Database::insert_case(const std::string& run_id, const core::CaseResult& cr) {
  sql::Statement(
      m_db,
      "INSERT INTO cases(run_id, case_key, kernel, params, status, message, "
      "backend, max_abs_error, reference, kernels) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, run_id)
      .bind(2, cr.spec.key)
      .bind(3, cr.spec.kernel)
      .bind(4, to_json(cr.spec).dump())
      .bind(5, core::to_string(cr.status))
      .bind(6, cr.message)
      .bind(7, cr.backend)
      .bind(8, cr.max_abs_error)
      .bind(9, cr.reference)
      .bind(10, cr.kernels ? std::optional<std::string>(json(*cr.kernels).dump()) : std::nullopt)
      .run();
  const std::int64_t case_id = sqlite3_last_insert_rowid(m_db.get());
  insert_samples(m_db, case_id, cr);
  insert_summary(m_db, case_id, cr.summary);
  sql::Statement ins_metric(m_db, "INSERT INTO metrics(case_id, name, value) VALUES (?, ?, ?)");
  for (const auto& [name, value] : cr.metrics)
    ins_metric.bind(1, case_id).bind(2, name).bind(3, value).run();
  insert_cost_rows(m_db, case_id, cr);
}

std::string Database::write_run(const core::Run& run) {
  require_writable("write a run");
  std::set<std::string> keys;
  for (const auto& c : run.cases)
    if (!keys.insert(c.spec.key).second)
      throw util::InputError(util::Diagnostic{
          "run", 0, 0,
          fmt::format("two cases have the key \"{}\"; case keys must be unique", c.spec.key)});
  const std::string id = run.id.empty() ? new_run_id() : run.id;

  sql::Transaction tx(m_db);
  {
    sql::Statement exists(m_db, "SELECT 1 FROM runs WHERE id = ?");
    if (exists.bind(1, id).step()) return id;  // idempotent: the transaction rolls back
  }
  insert_environment(run.env);
  sql::Statement(m_db,
                 "INSERT INTO runs(id, git_commit, git_branch, pr, ci_url, started_ns, ended_ns, "
                 "status, env_fingerprint, pair_id, side) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, id)
      .bind(2, run.git_commit)
      .bind(3, run.git_branch)
      .bind(4, run.pr)
      .bind(5, run.ci_url)
      .bind(6, run.started_ns)
      .bind(7, run.ended_ns)
      .bind(8, run.status)
      .bind(9, run.env.fingerprint())
      .bind(10, run.pair_id)
      .bind(11, run.side)
      .run();
  for (const auto& cr : run.cases) insert_case(id, cr);
  if (m_before_commit) m_before_commit();
  tx.commit();
  return id;
}

std::string Database::begin_run(const core::Run& run) {
  core::Run header = run;
  header.cases.clear();
  header.status = "incomplete";
  if (header.id.empty()) header.id = new_run_id();
  return write_run(header);
}

void Database::write_case(const std::string& run_id, const core::CaseResult& result) {
  require_writable("write a case");
  sql::Transaction tx(m_db);
  sql::Statement(m_db, "DELETE FROM cases WHERE run_id = ? AND case_key = ?")
      .bind(1, run_id)
      .bind(2, result.spec.key)
      .run();
  insert_case(run_id, result);
  if (m_before_commit) m_before_commit();
  tx.commit();
}

void Database::finish_run(const std::string& run_id, std::int64_t ended_ns,
                          const core::Environment& env, const std::string& status) {
  require_writable("finish a run");
  sql::Transaction tx(m_db);
  insert_environment(env);
  sql::Statement(m_db, "UPDATE runs SET ended_ns = ?, env_fingerprint = ?, status = ? WHERE id = ?")
      .bind(1, ended_ns)
      .bind(2, env.fingerprint())
      .bind(3, status)
      .bind(4, run_id)
      .run();
  m_db.exec("DELETE FROM environments WHERE fingerprint NOT IN (SELECT env_fingerprint FROM runs)");
  tx.commit();
}

}  // namespace attnprof::store
