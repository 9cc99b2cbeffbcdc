// attnprof history: one metric of the matching cases over the matching runs, as a table, CSV or
// JSON. Also home of the history filter options that trend and changes share.
#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/cli/time_filter.h"
#include "harness/core/clock.h"
#include "harness/store/history.h"
#include "harness/store/render.h"
#include "harness/util/error.h"

namespace attnprof::cli {

void add_run_filters(CLI::App& sub, HistoryFilterText& f) {
  sub.add_option("--branch", f.branch, "Only runs on this branch");
  sub.add_option("--since", f.since, "Runs started at or after: YYYY-MM-DD[THH:MM[:SS]] or Nd")
      ->check(time_filter_check(false));
  sub.add_option("--until", f.until, "Runs started at or before: YYYY-MM-DD[THH:MM[:SS]] or Nd")
      ->check(time_filter_check(true));
  sub.add_option("--env", f.env, "Environment fingerprint (prefix)");
}

void add_history_filters(CLI::App& sub, HistoryFilterText& f) {
  sub.add_option("--kernel", f.kernel, "Only this kernel (e.g. sdpa.flash)");
  sub.add_option("--metric", f.metric,
                 "Metric name or glob (default summary.median_ns; also summary.* fields and the "
                 "run's named metrics, e.g. throughput.tflops)")
      ->check(glob_check());
  sub.add_option("--commits", f.commits, "Commit range A..B (prefixes; either end may be empty)");
  add_run_filters(sub, f);
  sub.add_option("--last", f.last, "Only the newest N runs of each case");
}

store::HistoryFilter to_filter(const HistoryFilterText& t) {
  store::HistoryFilter f;
  f.case_glob = t.case_glob.empty() ? "*" : t.case_glob;
  f.kernel = t.kernel;
  if (!t.metric.empty()) f.metric = t.metric;
  f.branch = t.branch;
  f.env_fingerprint = t.env;
  if (t.last) f.last = *t.last;
  if (!t.commits.empty()) {
    auto dots = t.commits.find("..");
    if (dots == std::string::npos)
      throw util::InputError(util::Diagnostic{
          "--commits", 0, 0, fmt::format("\"{}\" is not a range A..B", t.commits)});
    f.commit_from = t.commits.substr(0, dots);
    f.commit_to = t.commits.substr(dots + 2);
  }
  const std::int64_t now = core::epoch_ns();
  auto time = [&](const std::string& text, const char* flag,
                  bool end_of_day) -> std::optional<std::int64_t> {
    if (text.empty()) return std::nullopt;
    try {
      return parse_time_filter(text, now, end_of_day);
    } catch (const std::invalid_argument& e) {
      throw util::InputError(util::Diagnostic{flag, 0, 0, e.what()});
    }
  };
  f.since_ns = time(t.since, "--since", false);
  f.until_ns = time(t.until, "--until", true);
  return f;
}

store::Format parse_format_option(const std::string& text) {
  auto f = store::parse_format(text);
  if (!f)
    throw util::InputError(util::Diagnostic{
        "--format", 0, 0, fmt::format("unknown format \"{}\" (table, csv or json)", text)});
  return *f;
}

Action setup_history(CLI::App& sub) {
  struct Opts {
    std::string db, format = "table";
    HistoryFilterText filter;
    bool wide = false;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  sub.add_option("--case", o->filter.case_glob, "Case key glob (default: every case)")
      ->check(glob_check());
  add_history_filters(sub, o->filter);
  sub.add_option("--format", o->format, "table, csv or json");
  add_wide_option(sub, o->wide);
  return [o] {
    const auto format = parse_format_option(o->format);
    auto db = open_history(o->db, store::Database::Mode::read_only);
    fmt::print("{}", store::format_history(store::history(db, to_filter(o->filter)), format,
                                           table_width(o->wide)));
    return 0;
  };
}

}  // namespace attnprof::cli
