// attnprof export: history as JSON lines (store/portable.h), to move it between machines; from a
// damaged history, what is readable (exit 3, naming each run left out).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/store/history.h"
#include "harness/store/portable.h"
#include "harness/util/error.h"

namespace attnprof::cli {

Action setup_export(CLI::App& sub) {
  struct Opts {
    std::string db, output = "-";
    HistoryFilterText filter;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  sub.add_option("-o,--output", o->output, "File to write (default: stdout)");
  add_run_filters(sub, o->filter);  // the same --branch, --since, --until, --env as history
  return [o] {
    auto f = to_filter(o->filter);
    store::RunFilter rf{f.branch, f.env_fingerprint, f.since_ns, f.until_ns, false, {}};
    auto db = open_history(o->db, store::Database::Mode::read_only);
    store::PortableStats s;
    if (o->output == "-") {
      s = store::export_jsonl(db, std::cout, rf);
    } else {
      std::ofstream out(o->output);
      if (!out) throw util::EnvironmentError(fmt::format("{}: cannot write the export", o->output));
      s = store::export_jsonl(db, out, rf);
    }
    fmt::print(stderr, "exported {} runs, {} annotations, {} A/B pairs' rounds\n", s.runs,
               s.annotations, s.ab_pairs);
    if (s.unreadable.empty()) return 0;
    // What could be read is written; the exit code says the history is not whole.
    fmt::print(stderr, "attnprof: left out {} run(s) that cannot be read:\n", s.unreadable.size());
    for (const auto& why : s.unreadable) fmt::print(stderr, "  {}\n", why);
    return static_cast<int>(util::exit_environment);
  };
}

}  // namespace attnprof::cli
