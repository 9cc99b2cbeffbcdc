// The history database: one SQLite file (WAL once written, busy timeout, versioned schema)
// holding every run with its environment, cases, samples, summaries, metrics and cost rows,
// plus gate verdicts and annotations. Errors from SQLite become util::EnvironmentError "<path>:
// <what, what to do>" (exit 3); a locked, read-only or newer-schema file is reported and never
// modified. Opening reads what it checks, never the whole file: check() does that.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/store/sqlite.h"

namespace attnprof::store {

// A run's row without its cases: what listings and history need.
struct RunInfo {
  std::string id, git_commit, git_branch, pr, ci_url, status, env_fingerprint;
  std::string pair_id, side;  // set for the two runs of an A/B
  std::int64_t started_ns = 0, ended_ns = 0;
  int cases = 0;
};

// The A/B pair ids among runs, each once, in the runs' order.
std::vector<std::string> pair_ids(const std::vector<RunInfo>& runs);

struct RunFilter {
  std::string branch;                              // exact; empty: any
  std::string env_fingerprint;                     // prefix; empty: any
  std::optional<std::int64_t> since_ns, until_ns;  // started_ns in [since, until]
  bool complete_only = false;
  std::vector<std::string> ids;  // exact run ids; empty: any
};

enum class AnnotationKind { accept, reset, ignore };
const char* to_string(AnnotationKind);
std::optional<AnnotationKind> parse_annotation_kind(std::string_view);

// A human decision about history: an accepted regression, a baseline reset (history before it
// is no baseline), or an ignored case. Scoped by case glob, and optionally a run, branch, env.
struct Annotation {
  std::int64_t id = 0;  // assigned by add_annotation
  AnnotationKind kind = AnnotationKind::accept;
  std::string case_glob = "*";
  std::string run_id, git_branch, env_fingerprint;
  std::string reason, author;   // both required
  std::int64_t created_ns = 0;  // 0: now
};

// A gate verdict as stored; the gate stage owns what the fields mean.
struct StoredVerdict {
  std::string case_key, verdict, baseline;
  std::optional<double> ratio, ci_low, ci_high, p_value;
  std::string detail;
  std::int64_t created_ns = 0;  // 0: now
};

// Retention. A run is pruned when it meets every given condition; annotated runs never are.
struct PrunePolicy {
  std::optional<int> keep_last;               // beyond the newest N runs of its branch
  std::optional<std::int64_t> older_than_ns;  // started before this time (epoch ns)
  bool dry_run = false;
};

// One round of an A/B, as the store writes and reads it: core's record.
using core::AbRound;

struct MergeStats {
  int runs_added = 0, runs_present = 0, annotations_added = 0, verdicts_added = 0;
  int ab_pairs = 0;  // A/B pairs whose rounds came along
};

class Database {
 public:
  enum class Mode { read_write, read_only };
  struct Options {
    std::chrono::milliseconds busy_timeout{30000};  // how long a writer waits for the lock
  };

  // The one way every command opens a history. Refused with util::EnvironmentError (exit 3)
  // and left as it was, byte for byte, with no -wal or -shm added: an existing file that is not
  // an attnprof database (only a missing path or an empty file becomes a new history), a
  // directory, a symlink loop, a schema version that is negative, newer than ours, or whose
  // tables do not match it; before a migration, a file that fails PRAGMA quick_check. Nothing
  // is written before that. Open reads the header, the schema and (read_write) the stored
  // environments, not every page: damage elsewhere surfaces as SQLite's error when a read
  // reaches it, named like the refusals (exit 3), and check() looks for it on purpose.
  // read_write migrates an older schema in place and refuses a history with a damaged
  // environment row (new runs would be written against it), or a case or annotation row that
  // breaks the schema's constraints or JSON (a writer must not write over damage as if it were
  // data; this reads every case's row, not their samples); the switch to WAL waits for the
  // first write, so a command that fails before writing leaves the journal mode as it was.
  // read_only never writes the file: an older schema is migrated in a private in-memory copy
  // (upgraded_copy() says what that cost; migrate_in_place() ends it); a WAL-mode file in a
  // folder it cannot write (read-only media) is opened immutable.
  static Database open(const std::string& path, Mode mode = Mode::read_write);
  static Database open(const std::string& path, Mode mode, Options options);

  // `attnprof migrate`: an existing history brought to this schema version in place, so reads
  // stop upgrading a copy of it in memory. Every page is checked first (quick_check), then every
  // migration runs in one transaction: a damaged file, or a failure half-way, leaves the file as
  // it was, byte for byte. Refused like open's refusals, and a missing or empty path (no history
  // to migrate), with util::EnvironmentError. Returns the version the file was at (this
  // version's: nothing was done).
  static int migrate_in_place(const std::string& path);

  // What reading an older schema through a migrated copy in memory cost this open: the copy
  // and its migration, every time such a history is read, until it is migrated in place.
  struct UpgradedCopy {
    int from_version = 0;
    std::int64_t peak_bytes = 0;  // SQLite's heap at its highest over the copy and migration,
                                  // beyond what it held before
    std::chrono::nanoseconds took{0};
  };
  const std::optional<UpgradedCopy>& upgraded_copy() const { return m_upgraded_copy; }

  Database(Database&&) noexcept = default;
  Database& operator=(Database&&) noexcept = default;
  // A history this open created (the path was missing or an empty file) is removed again (an
  // empty file emptied again) when the Database is destroyed by an exception, holds no run and
  // no annotation, and no other process has it open: a command that fails leaves nothing behind.
  ~Database();

  const std::string& path() const { return m_db.path(); }

  // The whole-file check that open leaves out (it reads every page, so it costs the file's size,
  // not an answer's): PRAGMA quick_check (b-trees, free list, record formats) or, with full,
  // integrity_check (indexes against their tables too), then every stored environment's fields,
  // then every row against the schema's CHECK constraints and its JSON columns' syntax (SQLite
  // checks constraints only on a writable connection). util::EnvironmentError "<path>: damaged
  // (...)" with SQLite's first message, or naming the row. merge runs it on every input;
  // `attnprof check` on --db.
  enum class Check { quick, full };
  void check(Check how = Check::quick);
  int opened_at_version() const { return m_opened_at_version; }  // before any migration

  // One transaction (BEGIN IMMEDIATE): a crash or kill -9 leaves no partial run. Assigns an id
  // (UUID v4 text) when run.id is empty; returns the id. Idempotent by id: writing a run whose
  // id is present changes nothing.
  std::string write_run(const core::Run& run);
  bool has_run(const std::string& id);
  bool has_pair(const std::string& pair_id);  // a run of this A/B pair is stored

  // A run written case by case, so that a run killed half-way keeps what it finished.
  // begin_run writes the run's row with status "incomplete" (the id is assigned when empty and
  // returned); write_case stores one case in its own transaction (replacing an earlier result of
  // the same key, which a resumed run may have); finish_run records the end time, the final
  // environment and status "complete". `attnprof run --resume` continues an incomplete run.
  std::string begin_run(const core::Run& run);
  void write_case(const std::string& run_id, const core::CaseResult& result);
  void finish_run(const std::string& run_id, std::int64_t ended_ns, const core::Environment& env,
                  const std::string& status = "complete");
  // The newest incomplete run, for --resume latest.
  std::optional<std::string> latest_incomplete_run();

  // A/B rounds, written with the case they belong to; read back in round order.
  void write_rounds(const std::string& pair_id, const std::vector<AbRound>& rounds);
  std::vector<AbRound> rounds(const std::string& pair_id);
  // The base and head runs of a pair: "latest" (newest pair), a pair id or a prefix of it.
  // nullopt when absent.
  std::optional<std::pair<RunInfo, RunInfo>> find_pair(const std::string& ref);

  // "latest" (newest complete run), a full id or a unique id prefix. nullopt when absent;
  // util::InputError when a prefix is ambiguous.
  std::optional<core::Run> load_run(const std::string& ref);
  // A run by the id a listing (list_runs, has_run) just gave: one that cannot be read back by
  // it is damage (an id that a damaged record or index holds differently), util::
  // EnvironmentError naming it, never an empty result.
  core::Run load_listed_run(const std::string& id);
  // One case of a run (its full id) without samples, summary and cost rows: status, backend,
  // kernels, error, reference, metrics; what a history baseline's findings read. nullopt when
  // the run has no such case.
  std::optional<core::CaseResult> load_case(const std::string& run_id, const std::string& case_key);
  std::optional<RunInfo> find_run(const std::string& ref);
  std::vector<RunInfo> list_runs(const RunFilter& filter = {});  // oldest first

  std::int64_t add_annotation(const Annotation& a);                     // returns its id
  std::vector<Annotation> annotations(const std::string& run_id = {});  // all when empty

  // Replaces the run's verdicts for the same (case, baseline).
  void write_verdicts(const std::string& run_id, const std::vector<StoredVerdict>& verdicts);
  std::vector<StoredVerdict> verdicts(const std::string& run_id);

  std::vector<RunInfo> prune(const PrunePolicy& policy);  // the runs pruned (or to prune)
  // Folds another history in: runs, annotations, verdicts, A/B rounds, in one transaction (a
  // failure part way leaves this file as it was). A run id stored here with other content is a
  // conflict, util::InputError naming both, as import_jsonl's. By path: opened and every page
  // read (check()) before anything is written here. An open Database: the caller checked it.
  MergeStats merge_from(const std::string& other_path);
  MergeStats merge_from(Database& other);
  void vacuum();

  // For the query modules of this stage (history.cpp, portable.cpp).
  sql::Connection& connection() { return m_db; }

  // Test seam: called inside write_run's transaction just before COMMIT.
  void set_before_commit_hook(std::function<void()> hook) { m_before_commit = std::move(hook); }

 private:
  struct Created {
    std::string path;  // empty: the file existed with content
    bool was_missing = false;
    int uncaught_at_open = 0;
  };
  Database(sql::Connection db, Mode mode, int opened_at, Created created, Options options)
      : m_db(std::move(db)),
        m_mode(mode),
        m_opened_at_version(opened_at),
        m_created(std::move(created)),
        m_options(options) {}
  static Database open_read_only(const std::string& path, Options options);
  // Refuses a read-only Database; before the first write, switches the file to WAL.
  void require_writable(const char* what);
  void insert_environment(const core::Environment& env);
  void insert_case(const std::string& run_id, const core::CaseResult& cr);
  std::optional<std::string> resolve(const std::string& ref);

  sql::Connection m_db;
  Mode m_mode = Mode::read_write;
  int m_opened_at_version = 0;
  std::function<void()> m_before_commit;
  Created m_created;
  Options m_options;
  bool m_wal = false;  // switched to WAL (require_writable)
  std::optional<UpgradedCopy> m_upgraded_copy;
};

std::string new_run_id();

}  // namespace attnprof::store
