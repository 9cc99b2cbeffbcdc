// A fleet's shared history on a PostgreSQL server: the durable store that many jobs push their
// runs to and pull a slice from into their local SQLite history (docs/fleet.md). The records
// on the server are the JSON-lines export's own objects (portable.h): a run (with its cases,
// samples, cost rows), its verdicts, an A/B pair's rounds, an annotation. Every SQL statement
// the server sees is in server.cpp.
//
// Push: one transaction per run (an A/B pair's two runs and their rounds together), so a job
// killed mid-push leaves no partial run. A run id already on the server with the same content
// is skipped; with other content it is a conflict: left as it is on the server, and named.
// Pull: the slice's run ids are listed first, and only those the local history lacks travel.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/store/database.h"
#include "harness/store/pg.h"

namespace attnprof::store {

struct PushOptions {
  RunFilter filter;  // which local runs; only complete ones are pushed
  // Empty: every run the filter takes. Each must be here and complete, else util::InputError
  // naming it before anything is sent.
  std::vector<std::string> run_ids;
  // Test seam: called inside each run's transaction just before COMMIT.
  std::function<void()> before_commit;
};

// A run whose id the server holds with other content: what differs, field by field.
struct PushConflict {
  std::string run_id;
  std::string detail;  // "git_commit: \"abc\" here, \"def\" on the server; cases differ"
};

struct PushStats {
  int runs = 0, runs_present = 0, annotations = 0, ab_pairs = 0;
  std::vector<PushConflict> conflicts;  // left out; the rest was pushed
  std::vector<std::string> unreadable;  // runs the filters take that cannot be read: why each
};

// Which runs a pull takes: the filter's (branch exact, fingerprint prefix, time window), and of
// those the newest `last`.
struct Slice {
  RunFilter filter;
  std::optional<int> last;
};

struct PullStats {
  int runs = 0;          // imported
  int runs_present = 0;  // in the slice, already in the local history
  int annotations = 0, ab_pairs = 0;
};

// Each of `run_ids` held by `local` and complete, else util::InputError naming each that is not:
// what push checks first, and a caller may check before it connects.
void check_pushable(Database& local, const std::vector<std::string>& run_ids);
PushStats push(Database& local, pg::Connection& server, const PushOptions& options);
PullStats pull(pg::Connection& server, Database& local, const Slice& slice);

}  // namespace attnprof::store
