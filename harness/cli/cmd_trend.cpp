// attnprof trend CASE: a case's metric over its history as a terminal sparkline, one line per
// (case, metric, environment): never mixes machines in one line.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>
#include <tuple>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/report/format.h"
#include "harness/store/history.h"
#include "harness/store/render.h"
#include "harness/util/error.h"
#include "harness/util/format.h"

namespace attnprof::cli {
namespace {
constexpr int kDefaultLast = 100;

// A run as the trend line names it: its date, and its commit where one was recorded.
std::string when(const store::HistoryRow& r) {
  const std::string day = store::format_time(r.started_ns).substr(0, 16);
  return r.git_commit.empty() ? day : fmt::format("{} ({})", day, r.git_commit.substr(0, 12));
}

// No case given: say what to give, with keys from the newest run to copy (when there is a history
// at `db`; an error message is one line).
util::Diagnostic no_case(const std::string& db) {
  std::string keys;
  if (std::filesystem::exists(db)) {
    auto store = open_history(db, store::Database::Mode::read_only);
    if (auto run = store.load_run("latest")) {
      for (std::size_t i = 0; i < run->cases.size() && i < 5; ++i)
        keys += (i ? ", " : "") + run->cases[i].spec.key;
      if (run->cases.size() > 5)
        keys += fmt::format(" and {} more (attnprof show)", run->cases.size() - 5);
    }
  }
  return util::Diagnostic{
      "case", 0, 0,
      "trend needs a case key or glob, e.g. attnprof trend 'bert-base/*/sdpa.math'" +
          (keys.empty() ? std::string() : "; cases of the newest run: " + keys)};
}

// One series within `width` columns: the key whole on its line (its metric and environment
// beside it, or under it when they do not fit), then the sparkline and the figures; where those
// do not fit beside each other, the sparkline's newest points on a line of their own, then the
// change and the runs' span, on one line or two. A sparkline of the default 100 runs alone is
// wider than 80 columns.
std::string series_text(const std::string& key, const std::string& tag,
                        const std::vector<double>& values, const std::string& change,
                        const std::string& span, std::size_t width) {
  using util::display_width;
  std::string out =
      key + (display_width(key) + 2 + display_width(tag) <= width ? "  " : "\n  ") + tag + "\n";
  std::string spark = store::sparkline(values);
  const std::string figures = change + ", " + span;
  if (4 + display_width(spark) + display_width(figures) <= width)
    return out + "  " + spark + "  " + figures + "\n";
  const std::size_t room = width > 4 ? width - 2 : 2;
  constexpr std::size_t kBarBytes = 3;  // each bar, U+2581..U+2588, is 3 bytes of UTF-8
  if (values.size() > room) spark = "…" + spark.substr(spark.size() - kBarBytes * (room - 1));
  out += "  " + spark + "\n";
  if (2 + display_width(figures) <= width) return out + "  " + figures + "\n";
  return out + "  " + change + ",\n  " + span + "\n";
}

}  // namespace

Action setup_trend(CLI::App& sub) {
  struct Opts {
    std::string db;
    HistoryFilterText filter;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  sub.add_option("case", o->filter.case_glob, "Case key or glob (required)")->check(glob_check());
  add_history_filters(sub, o->filter);
  sub.get_option("--last")->description(
      fmt::format("Only the newest N runs of each case (default {})", kDefaultLast));
  return [o] {
    if (o->filter.case_glob.empty()) throw util::InputError(no_case(o->db));
    auto db = open_history(o->db, store::Database::Mode::read_only);
    // The newest kDefaultLast runs unless --last says otherwise: a read costs its answer, not
    // the history's length (a sparkline of 100,000 points says no more than one of 100).
    store::HistoryFilter filter = to_filter(o->filter);
    const bool windowed = !o->filter.last;
    if (windowed) filter.last = kDefaultLast;
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<store::HistoryRow>>
        series;
    for (auto& r : store::history(db, filter))
      series[{r.case_key, r.metric, r.env_fingerprint}].push_back(std::move(r));
    if (series.empty()) {
      fmt::print("no history for \"{}\"\n", o->filter.case_glob);
      return 0;
    }
    for (const auto& [key, rows] : series) {
      std::vector<double> v;
      for (const auto& r : rows) v.push_back(r.value);
      const auto& [case_key, metric, env] = key;
      const bool ns = metric.ends_with("_ns");
      auto show = [&](double x) {
        return ns ? util::format_duration(x) : fmt::format("{:.4g}", x);
      };
      const std::string change =
          fmt::format("{} -> {} ({:+.1f}%), {} runs", show(v.front()), show(v.back()),
                      v.front() != 0 ? 100 * (v.back() / v.front() - 1) : 0.0, v.size());
      fmt::print("{}", series_text(case_key, fmt::format("[{} env {}]", metric, env), v, change,
                                   when(rows.front()) + " to " + when(rows.back()),
                                   report::console_width()));
      if (windowed && std::ssize(rows) == kDefaultLast)
        fmt::print("  (the newest {} runs; --last N for more)\n", kDefaultLast);
    }
    return 0;
  };
}

}  // namespace attnprof::cli
