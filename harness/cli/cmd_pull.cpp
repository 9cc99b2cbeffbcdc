// attnprof pull: a slice of a fleet's PostgreSQL server (store/server.h) into a local history,
// only the runs it does not hold yet.
#include <fmt/format.h>

#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/store/server.h"
#include "harness/util/error.h"

namespace attnprof::cli {

Action setup_pull(CLI::App& sub) {
  struct Opts {
    std::string db, url;
    std::optional<int> last;
    HistoryFilterText filter;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  add_server_option(sub, o->url, "--from");
  add_run_filters(sub, o->filter);
  sub.add_option("--last", o->last, "Only the newest N runs the filters take");
  return [o] {
    if (o->last && *o->last < 1)
      throw util::InputError(
          util::Diagnostic{"--last", 0, 0, fmt::format("{} is not a count of runs", *o->last)});
    store::Slice slice{to_run_filter(o->filter), o->last};
    auto server = connect_server(o->url, "--from");
    auto db = open_history(o->db);
    const store::PullStats s = store::pull(server, db, slice);
    fmt::print("{}: {} runs pulled, {} already here, {} annotations, {} A/B pairs' rounds\n",
               server.name(), s.runs, s.runs_present, s.annotations, s.ab_pairs);
    return 0;
  };
}

}  // namespace attnprof::cli
