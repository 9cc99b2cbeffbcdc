// The history database (database.h), maintenance: prune by a retention policy, merge another
// history in, vacuum.
#include <fmt/format.h>

#include <optional>

#include "harness/store/database.h"
#include "harness/store/database_rows.h"
#include "harness/store/portable.h"
#include "harness/util/error.h"

namespace attnprof::store {

std::vector<RunInfo> Database::prune(const PrunePolicy& p) {
  if (!p.keep_last && !p.older_than_ns)
    throw util::InputError(util::Diagnostic{
        "prune", 0, 0, "give a retention policy: --keep-last N, --older-than DAYS, or both"});
  if (p.keep_last && *p.keep_last < 0)
    throw util::InputError(util::Diagnostic{"prune", 0, 0, "--keep-last must be 0 or more"});
  if (!p.dry_run) require_writable("prune");
  std::optional<sql::Transaction> tx;
  if (!p.dry_run) tx.emplace(m_db);
  std::vector<RunInfo> victims;
  {
    sql::Statement st(
        m_db, fmt::format("WITH ranked AS (SELECT id, ROW_NUMBER() OVER (PARTITION BY git_branch "
                          "ORDER BY started_ns DESC, rowid DESC) AS rn FROM runs) "
                          "SELECT {} FROM runs r JOIN ranked k ON k.id = r.id "
                          "WHERE (?1 IS NULL OR k.rn > ?1) AND (?2 IS NULL OR r.started_ns < ?2) "
                          "AND r.id NOT IN (SELECT run_id FROM annotations) "
                          "ORDER BY r.started_ns, r.rowid",
                          kRunColumns));
    st.bind(1, p.keep_last).bind(2, p.older_than_ns);
    while (st.step()) victims.push_back(read_run_info(st));
  }
  if (p.dry_run) return victims;
  sql::Statement del(m_db, "DELETE FROM runs WHERE id = ?");
  for (const auto& r : victims) del.bind(1, r.id).run();
  m_db.exec("DELETE FROM environments WHERE fingerprint NOT IN (SELECT env_fingerprint FROM runs)");
  m_db.exec("DELETE FROM ab_rounds WHERE pair_id NOT IN (SELECT pair_id FROM runs)");
  tx->commit();
  return victims;
}

MergeStats Database::merge_from(const std::string& other_path) {
  Database other = open(other_path, Mode::read_only);
  other.check();  // every page of what comes in, before any of it is written here
  return merge_from(other);
}

MergeStats Database::merge_from(Database& other) {
  // Only now, the input found sound: a merge refused for its input leaves the journal mode.
  require_writable("merge into it");
  // One transaction: a failure part way (this file's damage met by a write, an input's run
  // that cannot be read) leaves this file as it was, not holding half of the inputs.
  sql::Transaction tx(m_db);
  MergeStats stats;
  const auto runs = other.list_runs();
  for (const auto& info : runs) {
    if (has_run(info.id)) {
      // The same id with other content is two runs claiming one id, as import calls it: a
      // conflict that neither side may silently win (the transaction takes nothing in).
      if (auto d = run_difference(load_listed_run(info.id), other.load_listed_run(info.id),
                                  "the input's"))
        throw util::InputError(util::Diagnostic{
            other.path(), 0, 0,
            fmt::format("run {} is already stored in {} with other content ({}): merge it into "
                        "another history, or remove one of the two",
                        info.id, path(), *d)});
      ++stats.runs_present;
    } else {
      write_run(other.load_listed_run(info.id));
      ++stats.runs_added;
    }
    auto vs = other.verdicts(info.id);
    if (!vs.empty()) {
      auto before = verdicts(info.id).size();
      write_verdicts(info.id, vs);
      stats.verdicts_added += static_cast<int>(verdicts(info.id).size() - before);
    }
  }
  for (const auto& a : other.annotations()) {
    auto before = m_db.scalar_int("SELECT count(*) FROM annotations");
    add_annotation(a);
    stats.annotations_added +=
        static_cast<int>(m_db.scalar_int("SELECT count(*) FROM annotations") - before);
  }
  // The rounds of every A/B pair, so the pair can be judged again here (attnprof ab --pair).
  for (const auto& pair : pair_ids(runs)) {
    const auto rounds = other.rounds(pair);
    if (rounds.empty()) continue;
    write_rounds(pair, rounds);
    ++stats.ab_pairs;
  }
  tx.commit();
  return stats;
}

void Database::vacuum() {
  require_writable("vacuum");
  m_db.exec("VACUUM");
}

}  // namespace attnprof::store
