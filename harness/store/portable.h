// Export and import of history as JSON lines, for moving it between machines and for reading
// it without SQLite. Line 1 is a header {"format":"attnprof-history","version":N}; then one
// object per line: {"run":{...}} (with its verdicts under "verdicts"), {"annotation":{...}},
// and after the runs, for each A/B pair among them, {"ab_rounds":{"pair":ID,"rounds":[...]}}
// (every round of the interleaved measurement, so the pair can be judged again). Version 2
// has A/B rounds; an export without any is version 1, which older attnprofs read too.
// Import is idempotent like write_run: runs already present are skipped, rounds rewritten.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/store/database.h"

namespace attnprof::store {

struct PortableStats {
  int runs = 0, runs_skipped = 0, annotations = 0;
  int ab_pairs = 0;                     // A/B pairs whose rounds were written
  int ab_pairs_skipped = 0;             // import: rounds of a pair none of whose runs is stored
  std::vector<std::string> unreadable;  // export: why each run it left out cannot be read
};

// A run that cannot be read back (a damaged row or page) is left out and named in
// `unreadable`; everything readable is written.
PortableStats export_jsonl(Database& db, std::ostream& out, const RunFilter& filter = {});
// `source` names the input in messages: "<source>:<line>: <what is wrong>" (util::InputError);
// a run record missing a field that every export writes (id, git_commit, started_ns, ended_ns,
// status, env, cases) is refused naming it, never filled in.
// A run whose id is stored with other content is a conflict: util::InputError naming both
// contents' key fields, and nothing is imported.
PortableStats import_jsonl(Database& db, std::istream& in, const std::string& source);

// How two runs of one id differ, as import and merge name a conflict: nullopt when they are the
// same, else "stored: <key fields>; <other_name>: <key fields>; first difference at /path".
std::optional<std::string> run_difference(const core::Run& stored, const core::Run& other,
                                          std::string_view other_name);

}  // namespace attnprof::store
