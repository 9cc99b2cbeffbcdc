// attnprof push and pull (server.h): the server's schema, every statement it is sent, and the
// two directions: an export of the local history streamed into one transaction per run, and a
// slice of the server composed as an export and imported locally.
#include "harness/store/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <streambuf>

#include "harness/store/portable.h"
#include "harness/util/error.h"

namespace attnprof::store {

using nlohmann::json;

namespace {

// Every statement the server is sent. Records are the export's objects as text, so the server
// needs no knowledge of their fields beyond the few it filters on.
namespace q {

constexpr int kSchemaVersion = 1;
constexpr const char* has_schema = "SELECT to_regclass('attnprof_schema') IS NOT NULL";
constexpr const char* schema_version = "SELECT max(version) FROM attnprof_schema";
// Two first pushes at once: the second waits here, then finds the tables made. A session
// lock, taken before the transaction that looks again: a transaction that began before the
// tables were committed keeps finding their names absent (PostgreSQL reads the catalog
// through a cache it refreshes when a transaction starts or a table is locked, and an advisory
// lock is no table), and its CREATE TABLE then fails with "already exists".
constexpr const char* schema_lock = "SELECT pg_advisory_lock(7308604897068083200)";
constexpr const char* schema_unlock = "SELECT pg_advisory_unlock(7308604897068083200)";
// IF NOT EXISTS and the one version row inserted only when absent: made twice, made once.
constexpr const char* create_schema = R"(
CREATE TABLE IF NOT EXISTS attnprof_schema (version integer NOT NULL);
CREATE TABLE IF NOT EXISTS attnprof_runs (
  id text PRIMARY KEY,
  git_branch text NOT NULL,
  env_fingerprint text NOT NULL,
  started_ns bigint NOT NULL,
  pair_id text NOT NULL,
  record text NOT NULL,
  pushed_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX IF NOT EXISTS attnprof_runs_slice ON attnprof_runs (git_branch, env_fingerprint, started_ns);
CREATE TABLE IF NOT EXISTS attnprof_verdicts (
  run_id text NOT NULL REFERENCES attnprof_runs (id) ON DELETE CASCADE,
  case_key text NOT NULL,
  baseline text NOT NULL,
  record text NOT NULL,
  PRIMARY KEY (run_id, case_key, baseline));
CREATE TABLE IF NOT EXISTS attnprof_ab_rounds (pair_id text PRIMARY KEY, record text NOT NULL);
CREATE TABLE IF NOT EXISTS attnprof_annotations (
  digest text PRIMARY KEY,
  created_ns bigint NOT NULL,
  record text NOT NULL);
INSERT INTO attnprof_schema SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM attnprof_schema);
)";

constexpr const char* insert_run =
    "INSERT INTO attnprof_runs (id, git_branch, env_fingerprint, started_ns, pair_id, record) "
    "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING id";
constexpr const char* same_run = "SELECT record = $2 FROM attnprof_runs WHERE id = $1";
constexpr const char* run_record = "SELECT record FROM attnprof_runs WHERE id = $1";
constexpr const char* upsert_verdict =
    "INSERT INTO attnprof_verdicts (run_id, case_key, baseline, record) VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (run_id, case_key, baseline) DO UPDATE SET record = EXCLUDED.record";
constexpr const char* upsert_rounds =
    "INSERT INTO attnprof_ab_rounds (pair_id, record) VALUES ($1, $2) "
    "ON CONFLICT (pair_id) DO UPDATE SET record = EXCLUDED.record";
constexpr const char* insert_annotation =
    "INSERT INTO attnprof_annotations (digest, created_ns, record) VALUES (md5($1), $2, $1) "
    "ON CONFLICT (digest) DO NOTHING RETURNING digest";

// The slice, newest first so that LIMIT keeps the newest: $1 branch ('' any), $2 fingerprint
// prefix, $3 and $4 the window (NULL: open), $5 how many (NULL: all).
constexpr const char* slice_ids =
    "SELECT id FROM attnprof_runs WHERE ($1 = '' OR git_branch = $1) "
    "AND starts_with(env_fingerprint, $2) "
    "AND ($3::bigint IS NULL OR started_ns >= $3::bigint) "
    "AND ($4::bigint IS NULL OR started_ns <= $4::bigint) "
    "ORDER BY started_ns DESC, id DESC LIMIT $5::bigint";
// $1: a JSON array of ids.
constexpr const char* runs_by_id =
    "SELECT id, record FROM attnprof_runs "
    "WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY started_ns, id";
constexpr const char* verdicts_by_run =
    "SELECT run_id, record FROM attnprof_verdicts "
    "WHERE run_id IN (SELECT jsonb_array_elements_text($1::jsonb)) "
    "ORDER BY run_id, case_key, baseline";
constexpr const char* rounds_by_pair =
    "SELECT pair_id, record FROM attnprof_ab_rounds "
    "WHERE pair_id IN (SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY pair_id";
constexpr const char* all_annotations =
    "SELECT record FROM attnprof_annotations ORDER BY created_ns, digest";

}  // namespace q

// BEGIN, `body`, COMMIT (or ROLLBACK when it returns false); a deadlock or serialization
// failure runs it again, up to five times.
template <class Body>
bool in_transaction(pg::Connection& s, Body body) {
  for (int attempt = 1;; ++attempt) {
    s.exec("BEGIN");
    try {
      const bool keep = body();
      s.exec(keep ? "COMMIT" : "ROLLBACK");
      return keep;
    } catch (const pg::Error& e) {
      s.exec("ROLLBACK");
      if (!e.retryable() || attempt == 5) throw;
    } catch (...) {
      s.exec("ROLLBACK");
      throw;
    }
  }
}

// Whether the server holds attnprof's tables (creating them when `create`); a schema newer than
// this attnprof's is refused before anything is read or written.
bool ensure_schema(pg::Connection& s, bool create) {
  if (s.exec(q::has_schema).text(0, 0) != "t") {
    if (!create) return false;
    s.exec(q::schema_lock);
    try {
      in_transaction(s, [&] {
        if (s.exec(q::has_schema).text(0, 0) != "t") s.exec(q::create_schema);
        return true;
      });
    } catch (...) {
      try {
        s.exec(q::schema_unlock);
      } catch (const pg::Error&) {  // a lost connection took the lock with it; the first
      }                             // failure is the one to report
      throw;
    }
    s.exec(q::schema_unlock);
  }
  const int version = std::stoi(s.exec(q::schema_version).text(0, 0));
  if (version > q::kSchemaVersion)
    throw util::EnvironmentError(fmt::format(
        "{}: the server's attnprof schema is version {}, newer than this attnprof's ({}): "
        "use a newer attnprof",
        s.name(), version, q::kSchemaVersion));
  return true;
}

struct VerdictRecord {
  std::string case_key, baseline, record;
};

struct RunRecord {
  std::string id, branch, env, pair_id, record;
  std::int64_t started_ns = 0;
  std::vector<VerdictRecord> verdicts;
};

// What is written in one transaction: a run, or an A/B pair's runs and rounds.
struct Unit {
  std::vector<RunRecord> runs;
  std::string pair;
  std::optional<std::string> rounds;
};

RunRecord run_record(const json& line) {
  const json& run = line.at("run");
  RunRecord r;
  r.id = run.at("id").get<std::string>();
  r.branch = run.value("git_branch", "");
  r.pair_id = run.value("pair_id", "");
  r.started_ns = run.value("started_ns", std::int64_t{0});
  r.env = core::Environment{run.value("env", std::map<std::string, std::string>{})}.fingerprint();
  r.record = run.dump();
  if (line.contains("verdicts"))
    for (const json& v : line.at("verdicts"))
      r.verdicts.push_back({v.value("case", ""), v.value("baseline", ""), v.dump()});
  return r;
}

// A value as a conflict names it: whole up to a commit id's length and more, cut after that.
std::string shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 64 ? s.substr(0, 61) + "..." : s;
}

// The fields in which two runs of one id differ: scalars with both values, the rest by name.
std::string conflict_detail(const std::string& here, const std::string& there) {
  const json a = json::parse(here), b = json::parse(there);
  std::set<std::string> keys;
  for (const auto& [k, v] : a.items()) keys.insert(k);
  for (const auto& [k, v] : b.items()) keys.insert(k);
  std::vector<std::string> parts;
  for (const auto& k : keys) {
    const json x = a.value(k, json()), y = b.value(k, json());
    if (x == y) continue;
    if (x.is_structured() || y.is_structured())
      parts.push_back(fmt::format("{} differ", k));
    else
      parts.push_back(fmt::format("{}: {} here, {} on the server", k, shown(x), shown(y)));
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// One unit in one transaction. A conflict rolls the unit back: a pair is stored whole or not.
PushStats write_unit(pg::Connection& s, Unit& u, const std::function<void()>& before_commit) {
  std::sort(u.runs.begin(), u.runs.end(),  // one lock order for every writer: no deadlock
            [](const RunRecord& a, const RunRecord& b) { return a.id < b.id; });
  PushStats out;
  const bool kept = in_transaction(s, [&] {
    out = {};
    for (const RunRecord& r : u.runs) {
      if (!s.exec(q::insert_run,
                  {r.id, r.branch, r.env, std::to_string(r.started_ns), r.pair_id, r.record})
               .size()) {
        if (s.exec(q::same_run, {r.id, r.record}).text(0, 0) != "t") {
          out.conflicts.push_back(
              {r.id, conflict_detail(r.record, s.exec(q::run_record, {r.id}).text(0, 0))});
          continue;
        }
        ++out.runs_present;
      } else {
        ++out.runs;
      }
      for (const auto& v : r.verdicts)
        s.exec(q::upsert_verdict, {r.id, v.case_key, v.baseline, v.record});
    }
    if (!out.conflicts.empty()) return false;
    if (u.rounds) {
      s.exec(q::upsert_rounds, {u.pair, *u.rounds});
      ++out.ab_pairs;
    }
    if (before_commit) before_commit();
    return true;
  });
  if (!kept) out.runs = out.runs_present = 0;
  return out;
}

void add(PushStats& total, const PushStats& s) {
  total.runs += s.runs;
  total.runs_present += s.runs_present;
  total.ab_pairs += s.ab_pairs;
  total.annotations += s.annotations;
  total.conflicts.insert(total.conflicts.end(), s.conflicts.begin(), s.conflicts.end());
}

// The export's lines as they are written: runs go out one by one, an A/B pair's runs wait for
// its rounds (export writes rounds after every run, annotations last).
class Pusher {
 public:
  Pusher(pg::Connection& s, const PushOptions& o) : m_s(s), m_o(o) {}

  void line(std::string_view text) {
    if (++m_line == 1) return;  // the header: export_jsonl's own
    const json j = json::parse(text);
    if (j.contains("run")) {
      RunRecord r = run_record(j);
      if (r.pair_id.empty()) {
        Unit u;
        u.runs.push_back(std::move(r));
        add(m_stats, write_unit(m_s, u, m_o.before_commit));
      } else {
        m_pairs[r.pair_id].runs.push_back(std::move(r));
      }
    } else if (j.contains("ab_rounds")) {
      const std::string pair = j.at("ab_rounds").at("pair").get<std::string>();
      auto it = m_pairs.find(pair);
      if (it == m_pairs.end()) return;  // none of its runs is pushed
      it->second.pair = pair;
      it->second.rounds = j.at("ab_rounds").dump();
      add(m_stats, write_unit(m_s, it->second, m_o.before_commit));
      m_pairs.erase(it);
    } else if (j.contains("annotation")) {
      flush_pairs();
      const json& a = j.at("annotation");
      // One statement each, outside any transaction: annotations are independent rows.
      if (m_s.exec(q::insert_annotation,
                   {a.dump(), std::to_string(a.value("created_ns", std::int64_t{0}))})
              .size())
        ++m_stats.annotations;
    }
  }

  PushStats finish() {
    flush_pairs();
    return m_stats;
  }

 private:
  void flush_pairs() {  // pairs without rounds
    for (auto& [pair, u] : m_pairs) add(m_stats, write_unit(m_s, u, m_o.before_commit));
    m_pairs.clear();
  }

  pg::Connection& m_s;
  const PushOptions& m_o;
  std::map<std::string, Unit> m_pairs;
  PushStats m_stats;
  int m_line = 0;
};

// An ostream's bytes, handed on a line at a time: an export is pushed as it is written, never
// held whole in memory.
class LineSink : public std::streambuf {
 public:
  explicit LineSink(Pusher& p) : m_p(p) {}

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) put(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) put(s[i]);
    return n;
  }

 private:
  void put(char c) {
    if (c != '\n') {
      m_text += c;
      return;
    }
    m_p.line(m_text);
    m_text.clear();
  }
  Pusher& m_p;
  std::string m_text;
};

std::string id_array(const std::vector<std::string>& ids) {
  return json(ids).dump();
}

// The missing runs of one batch, their verdicts and their pairs' rounds, as export lines.
void write_runs(pg::Connection& s, const std::vector<std::string>& ids, std::ostream& out) {
  const std::string list = id_array(ids);
  std::map<std::string, json> verdicts;
  const pg::Rows vs = s.exec(q::verdicts_by_run, {list});
  for (std::size_t i = 0; i < vs.size(); ++i)
    verdicts[vs.text(i, 0)].push_back(json::parse(vs.text(i, 1)));
  std::vector<std::string> pairs;
  const pg::Rows runs = s.exec(q::runs_by_id, {list});
  for (std::size_t i = 0; i < runs.size(); ++i) {
    json line = {{"run", json::parse(runs.text(i, 1))}};
    if (auto it = verdicts.find(runs.text(i, 0)); it != verdicts.end())
      line["verdicts"] = it->second;
    const std::string pair = line["run"].value("pair_id", "");
    if (!pair.empty() && std::find(pairs.begin(), pairs.end(), pair) == pairs.end())
      pairs.push_back(pair);
    out << line.dump() << "\n";
  }
  const pg::Rows rounds = s.exec(q::rounds_by_pair, {id_array(pairs)});
  for (std::size_t i = 0; i < rounds.size(); ++i)
    out << json{{"ab_rounds", json::parse(rounds.text(i, 1))}}.dump() << "\n";
}

std::string export_header() {
  return json{{"format", "attnprof-history"}, {"version", 2}}.dump() + "\n";
}

void import_text(Database& local, const std::string& text, const std::string& source,
                 PullStats& stats) {
  std::istringstream in(text);
  const PortableStats s = import_jsonl(local, in, source);
  stats.runs += s.runs;
  stats.runs_present += s.runs_skipped;
  stats.annotations += s.annotations;
  stats.ab_pairs += s.ab_pairs;
}

pg::Param text_or_null(const std::optional<std::int64_t>& v) {
  return v ? pg::Param(std::to_string(*v)) : std::nullopt;
}

// Runs per import: each batch is one local transaction, so a pull cut short keeps whole runs.
constexpr std::size_t kPullBatch = 200;

}  // namespace

void check_pushable(Database& local, const std::vector<std::string>& run_ids) {
  // A run asked for by id that is not here (or not finished) is the user's mistake: refused
  // before anything is sent, not counted as "0 runs pushed".
  std::vector<util::Diagnostic> absent;
  for (const auto& id : run_ids) {
    std::optional<RunInfo> info;
    if (local.has_run(id)) info = local.find_run(id);  // find_run alone takes prefixes too
    if (!info)
      absent.push_back({local.path(), 0, 0, fmt::format("no run {} in this history", id)});
    else if (info->status != "complete")
      absent.push_back({local.path(), 0, 0,
                        fmt::format("run {} is {}: only complete runs are pushed (attnprof run "
                                    "--resume {} finishes it)",
                                    id, info->status, id)});
  }
  if (!absent.empty()) throw util::InputError(absent);
}

PushStats push(Database& local, pg::Connection& server, const PushOptions& options) {
  check_pushable(local, options.run_ids);
  ensure_schema(server, true);
  Pusher pusher(server, options);
  LineSink sink(pusher);
  std::ostream out(&sink);
  // A failure inside a line's push reaches us as itself, not as a failed write.
  out.exceptions(std::ios::badbit);
  RunFilter filter = options.filter;
  filter.complete_only = true;
  filter.ids = options.run_ids;
  const PortableStats exported = export_jsonl(local, out, filter);
  PushStats stats = pusher.finish();
  stats.unreadable = exported.unreadable;
  return stats;
}

PullStats pull(pg::Connection& server, Database& local, const Slice& slice) {
  PullStats stats;
  if (!ensure_schema(server, false)) return stats;  // nothing pushed yet
  const RunFilter& f = slice.filter;
  const pg::Rows ids =
      server.exec(q::slice_ids,
                  {f.branch, f.env_fingerprint, text_or_null(f.since_ns), text_or_null(f.until_ns),
                   slice.last ? pg::Param(std::to_string(*slice.last)) : std::nullopt});
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (local.has_run(ids.text(i, 0)))
      ++stats.runs_present;
    else
      missing.push_back(ids.text(i, 0));
  }
  for (std::size_t at = 0; at < missing.size(); at += kPullBatch) {
    const std::vector<std::string> batch(
        missing.begin() + at, missing.begin() + std::min(missing.size(), at + kPullBatch));
    std::ostringstream text;
    text << export_header();
    write_runs(server, batch, text);
    import_text(local, text.str(), server.name(), stats);
  }
  std::ostringstream text;
  text << export_header();
  const pg::Rows anns = server.exec(q::all_annotations);
  for (std::size_t i = 0; i < anns.size(); ++i)
    text << json{{"annotation", json::parse(anns.text(i, 0))}}.dump() << "\n";
  import_text(local, text.str(), server.name(), stats);
  return stats;
}

}  // namespace attnprof::store
