// The history database (database.h), human decisions and gate outcomes: annotations (accept,
// reset, ignore) and the verdicts stored with a run.
#include <fmt/format.h>

#include "harness/core/clock.h"
#include "harness/store/database.h"
#include "harness/store/database_rows.h"
#include "harness/util/error.h"

namespace attnprof::store {

const char* to_string(AnnotationKind k) {
  switch (k) {
    case AnnotationKind::accept:
      return "accept";
    case AnnotationKind::reset:
      return "reset";
    case AnnotationKind::ignore:
      return "ignore";
  }
  return "?";
}

std::optional<AnnotationKind> parse_annotation_kind(std::string_view s) {
  for (auto k : {AnnotationKind::accept, AnnotationKind::reset, AnnotationKind::ignore})
    if (s == to_string(k)) return k;
  return std::nullopt;
}

std::int64_t Database::add_annotation(const Annotation& a) {
  require_writable("add an annotation");
  auto bad = [](std::string m) {
    return util::InputError(util::Diagnostic{"annotation", 0, 0, m});
  };
  if (a.reason.empty()) throw bad("a reason is required");
  if (a.author.empty()) throw bad("an author is required");
  if (a.case_glob.empty()) throw bad("a case glob is required (\"*\" for every case)");
  sql::Statement st(m_db,
                    "INSERT OR IGNORE INTO annotations(kind, case_glob, run_id, git_branch, "
                    "env_fingerprint, reason, author, created_ns) VALUES (?,?,?,?,?,?,?,?)");
  st.bind(1, to_string(a.kind))
      .bind(2, a.case_glob)
      .bind(3, a.run_id)
      .bind(4, a.git_branch)
      .bind(5, a.env_fingerprint)
      .bind(6, a.reason)
      .bind(7, a.author)
      .bind(8, a.created_ns ? a.created_ns : core::epoch_ns())
      .run();
  return sqlite3_last_insert_rowid(m_db.get());
}

std::vector<Annotation> Database::annotations(const std::string& run_id) {
  sql::Statement st(m_db,
                    "SELECT id, kind, case_glob, run_id, git_branch, env_fingerprint, reason, "
                    "author, created_ns FROM annotations WHERE ?1 = '' OR run_id = ?1 "
                    "ORDER BY created_ns, id");
  st.bind(1, run_id);
  std::vector<Annotation> out;
  while (st.step()) {
    Annotation a;
    a.id = st.int64(0);
    // A kind outside the schema's CHECK is damage, never some kind: taken as "ignore", it
    // would silently drop a case from every gate.
    const auto kind = parse_annotation_kind(st.text(1));
    if (!kind)
      throw damaged_row(m_db, "annotations", fmt::format("id {}", a.id), "kind",
                        fmt::format("\"{}\" is not accept, reset or ignore", st.text(1)));
    a.kind = *kind;
    a.case_glob = st.text(2);
    a.run_id = st.text(3);
    a.git_branch = st.text(4);
    a.env_fingerprint = st.text(5);
    a.reason = st.text(6);
    a.author = st.text(7);
    a.created_ns = st.int64(8);
    out.push_back(std::move(a));
  }
  return out;
}

void Database::write_verdicts(const std::string& run_id, const std::vector<StoredVerdict>& vs) {
  require_writable("write verdicts");
  sql::Transaction tx(m_db);
  if (!has_run(run_id))
    throw util::InputError(
        util::Diagnostic{"run", 0, 0, fmt::format("no run \"{}\" to attach verdicts to", run_id)});
  sql::Statement st(m_db,
                    "INSERT OR REPLACE INTO verdicts(run_id, case_key, verdict, baseline, ratio, "
                    "ci_low, ci_high, p_value, detail, created_ns) VALUES (?,?,?,?,?,?,?,?,?,?)");
  for (const auto& v : vs)
    st.bind(1, run_id)
        .bind(2, v.case_key)
        .bind(3, v.verdict)
        .bind(4, v.baseline)
        .bind(5, v.ratio)
        .bind(6, v.ci_low)
        .bind(7, v.ci_high)
        .bind(8, v.p_value)
        .bind(9, v.detail)
        .bind(10, v.created_ns ? v.created_ns : core::epoch_ns())
        .run();
  tx.commit();
}

std::vector<StoredVerdict> Database::verdicts(const std::string& run_id) {
  sql::Statement st(m_db,
                    "SELECT case_key, verdict, baseline, ratio, ci_low, ci_high, p_value, detail, "
                    "created_ns FROM verdicts WHERE run_id = ? ORDER BY case_key, baseline");
  st.bind(1, run_id);
  std::vector<StoredVerdict> out;
  while (st.step()) {
    StoredVerdict v;
    v.case_key = st.text(0);
    v.verdict = st.text(1);
    v.baseline = st.text(2);
    v.ratio = st.opt_real(3);
    v.ci_low = st.opt_real(4);
    v.ci_high = st.opt_real(5);
    v.p_value = st.opt_real(6);
    v.detail = st.text(7);
    v.created_ns = st.int64(8);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace attnprof::store
