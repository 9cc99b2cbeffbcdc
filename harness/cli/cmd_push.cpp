// attnprof push: a local history's runs to a fleet's PostgreSQL server (store/server.h). Also
// home of the server URL option that pull shares.
#include <fmt/format.h>

#include <cstdlib>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/store/history.h"
#include "harness/store/server.h"
#include "harness/util/error.h"

namespace attnprof::cli {

void add_server_option(CLI::App& sub, std::string& url, const char* flag) {
  // The URL may hold a password: from a CI secret it reads better from the environment than
  // from a command line that `ps` shows.
  const char* env = std::getenv("ATTNPROF_POSTGRES_URL");
  url = env && *env ? env : "";
  sub.add_option(flag, url,
                 "The fleet's server: postgresql://[user[:password]@]host[:port]/dbname "
                 "(default: $ATTNPROF_POSTGRES_URL)");
}

store::pg::Connection connect_server(const std::string& url, const char* flag) {
  if (url.empty())
    throw util::InputError(util::Diagnostic{
        flag, 0, 0, "no server named: give its postgresql:// URL or set $ATTNPROF_POSTGRES_URL"});
  store::pg::check_url(url, flag);
  return store::pg::Connection::open(url);
}

store::RunFilter to_run_filter(const HistoryFilterText& text) {
  const store::HistoryFilter f = to_filter(text);
  return store::RunFilter{f.branch, f.env_fingerprint, f.since_ns, f.until_ns, false, {}};
}

Action setup_push(CLI::App& sub) {
  struct Opts {
    std::string db, url;
    std::vector<std::string> runs;
    HistoryFilterText filter;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  add_server_option(sub, o->url, "--to");
  sub.add_option("--run", o->runs,
                 "Only this run id (default: every complete run the filters take)");
  add_run_filters(sub, o->filter);
  return [o] {
    store::PushOptions options;
    options.filter = to_run_filter(o->filter);
    options.run_ids = o->runs;
    auto db = open_history(o->db, store::Database::Mode::read_only);
    // A --run this history lacks is named whether or not the server answers.
    store::check_pushable(db, o->runs);
    auto server = connect_server(o->url, "--to");
    const store::PushStats s = store::push(db, server, options);
    fmt::print(
        "{}: {} runs pushed, {} already there, {} conflicting, {} annotations, {} A/B "
        "pairs' rounds\n",
        server.name(), s.runs, s.runs_present, s.conflicts.size(), s.annotations, s.ab_pairs);
    std::vector<util::Diagnostic> named;
    for (const auto& c : s.conflicts)
      named.push_back(util::Diagnostic{
          server.name(), 0, 0,
          fmt::format("run {} is on the server with other content ({}): left as it is there, "
                      "and not pushed",
                      c.run_id, c.detail)});
    if (!s.unreadable.empty()) {
      // A damaged local history: the readable runs went out, and the exit code (3, which
      // outranks a conflict's 2) says the push is not whole, as export's does.
      for (const auto& d : named) fmt::print(stderr, "{}\n", d.to_string());
      fmt::print(stderr, "attnprof: left out {} run(s) that cannot be read:\n",
                 s.unreadable.size());
      for (const auto& why : s.unreadable) fmt::print(stderr, "  {}\n", why);
      return static_cast<int>(util::exit_environment);
    }
    if (named.empty()) return 0;
    throw util::InputError(named);
  };
}

}  // namespace attnprof::cli
