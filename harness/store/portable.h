// Export and import of history as JSON lines, for moving it between machines and for reading
// it without SQLite. Line 1 is a header {"format":"attnprof-history","version":1}; then one
// object per line: {"run":{...}} (with its verdicts under "verdicts"), {"annotation":{...}}.
// Import is idempotent like write_run: runs already present are skipped.
#pragma once

#include <iosfwd>
#include <string>

#include "harness/store/database.h"

namespace attnprof::store {

struct PortableStats {
  int runs = 0, runs_skipped = 0, annotations = 0;
};

PortableStats export_jsonl(Database& db, std::ostream& out, const RunFilter& filter = {});
// `source` names the input in messages: "<source>:<line>: <what is wrong>" (util::InputError).
PortableStats import_jsonl(Database& db, std::istream& in, const std::string& source);

}  // namespace attnprof::store
