// The history database (database.h), A/B pairs: each pair's rounds, finding a pair's two runs.
#include <fmt/format.h>

#include <algorithm>

#include "harness/store/database.h"
#include "harness/store/database_rows.h"
#include "harness/util/error.h"

namespace attnprof::store {

void Database::write_rounds(const std::string& pair_id, const std::vector<AbRound>& rounds) {
  require_writable("write A/B rounds");
  sql::Transaction tx(m_db);
  sql::Statement ins(m_db,
                     "INSERT OR REPLACE INTO ab_rounds(pair_id, case_key, round, base_first, "
                     "base_ns, head_ns, base_n, head_n, at_ns, pass, base_q1_ns, head_q1_ns, "
                     "base_clock_mhz, head_clock_mhz) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& r : rounds)
    ins.bind(1, pair_id)
        .bind(2, r.case_key)
        .bind(3, r.round)
        .bind(4, r.base_first ? 1 : 0)
        .bind(5, r.base_ns)
        .bind(6, r.head_ns)
        .bind(7, r.base_n)
        .bind(8, r.head_n)
        .bind(9, r.at_ns)
        .bind(10, r.pass)
        .bind(11, r.base_q1_ns)
        .bind(12, r.head_q1_ns)
        .bind(13, r.base_clock_mhz)
        .bind(14, r.head_clock_mhz)
        .run();
  tx.commit();
}

std::vector<AbRound> Database::rounds(const std::string& pair_id) {
  std::vector<AbRound> out;
  sql::Statement st(m_db,
                    "SELECT case_key, round, base_first, base_ns, head_ns, base_n, head_n, at_ns, "
                    "pass, base_q1_ns, head_q1_ns, base_clock_mhz, head_clock_mhz FROM ab_rounds "
                    "WHERE pair_id = ? "
                    "ORDER BY case_key, round");
  st.bind(1, pair_id);
  while (st.step()) {
    AbRound r;
    r.case_key = st.text(0);
    r.round = static_cast<int>(st.int64(1));
    r.base_first = st.int64(2) != 0;
    r.base_ns = st.real(3);
    r.head_ns = st.real(4);
    r.base_n = static_cast<int>(st.int64(5));
    r.head_n = static_cast<int>(st.int64(6));
    r.at_ns = st.int64(7);
    r.pass = static_cast<int>(st.int64(8));
    r.base_q1_ns = st.real(9);
    r.head_q1_ns = st.real(10);
    r.base_clock_mhz = st.real(11);
    r.head_clock_mhz = st.real(12);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<std::pair<RunInfo, RunInfo>> Database::find_pair(const std::string& ref) {
  std::string pair_id;
  if (ref == "latest") {
    sql::Statement st(m_db,
                      "SELECT pair_id FROM runs WHERE pair_id <> '' "
                      "ORDER BY started_ns DESC, rowid DESC LIMIT 1");
    if (!st.step()) return std::nullopt;
    pair_id = st.text(0);
  } else {
    sql::Statement st(m_db,
                      "SELECT DISTINCT pair_id FROM runs WHERE pair_id <> '' AND "
                      "substr(pair_id, 1, length(?1)) = ?1 LIMIT 2");
    st.bind(1, ref);
    std::vector<std::string> found;
    while (st.step()) found.push_back(st.text(0));
    if (found.empty()) return std::nullopt;
    if (found.size() > 1)
      throw util::InputError(util::Diagnostic{
          "--pair", 0, 0,
          fmt::format("\"{}\" names more than one A/B pair; give more of it", ref)});
    pair_id = found.front();
  }
  std::optional<RunInfo> base, head;
  sql::Statement st(m_db, fmt::format("SELECT {} FROM runs r WHERE r.pair_id = ?", kRunColumns));
  st.bind(1, pair_id);
  while (st.step()) {
    RunInfo info = read_run_info(st);
    (info.side == "base" ? base : head) = info;
  }
  if (!base || !head) return std::nullopt;
  return std::make_pair(*base, *head);
}

std::vector<std::string> pair_ids(const std::vector<RunInfo>& runs) {
  std::vector<std::string> ids;
  for (const auto& info : runs)
    if (!info.pair_id.empty() && std::find(ids.begin(), ids.end(), info.pair_id) == ids.end())
      ids.push_back(info.pair_id);
  return ids;
}

bool Database::has_pair(const std::string& pair_id) {
  if (pair_id.empty()) return false;
  sql::Statement st(m_db, "SELECT 1 FROM runs WHERE pair_id = ? LIMIT 1");
  return st.bind(1, pair_id).step();
}

}  // namespace attnprof::store
