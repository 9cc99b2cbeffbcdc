// The history subcommands' text (render.h): tables, CSV, JSON, the sparkline, and the times
// they print and read.
#include "harness/store/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

#include "harness/util/format.h"
#include "harness/util/table.h"

namespace attnprof::store {

using nlohmann::json;

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// cells[0] is the header; the table fits `width` (0: all columns) by util::Table's rule, the
// case key never cut, columns in `drop` left out first to last.
std::string table(const std::vector<std::vector<std::string>>& cells, std::size_t width,
                  std::size_t key, std::vector<std::size_t> drop) {
  util::Table t(cells.front());
  for (std::size_t i = 1; i < cells.size(); ++i) t.add(cells[i]);
  t.set_key(key);
  t.set_drop_order(std::move(drop));
  return t.render(width);
}

std::string short_id(const std::string& s, std::size_t n = 12) {
  return s.substr(0, n);
}

// Shortest text that reads back as the same double: exported numbers lose nothing
// (7377342 ns stays 7377342, not 7.37734e+06).
std::string number(double v) {
  return fmt::format("{}", v);
}

}  // namespace

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\n";
}

std::optional<Format> parse_format(std::string_view s) {
  if (s == "table") return Format::table;
  if (s == "csv") return Format::csv;
  if (s == "json") return Format::json;
  return std::nullopt;
}

std::string sparkline(std::span<const double> values) {
  static const char* bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty()) return "";
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  std::string out;
  for (double v : values) {
    int i = 3;
    if (*hi > *lo) i = static_cast<int>(std::lround((v - *lo) / (*hi - *lo) * 7));
    out += bars[std::clamp(i, 0, 7)];
  }
  return out;
}

std::string format_time(std::int64_t epoch_ns) {
  std::time_t t = static_cast<std::time_t>(epoch_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::optional<std::int64_t> parse_time(std::string_view text, std::int64_t now_ns) {
  std::string s(text);
  if (s.size() >= 2 && s.back() == 'd' &&
      std::all_of(s.begin(), s.end() - 1, [](char c) { return c >= '0' && c <= '9'; }))
    return now_ns - std::stoll(s.substr(0, s.size() - 1)) * 86400LL * 1'000'000'000LL;
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  char tail[4] = {0};
  int n =
      std::sscanf(s.c_str(), "%4d-%2d-%2d%*[T ]%2d:%2d:%2d%3s", &y, &mo, &d, &h, &mi, &sec, tail);
  bool ok = false;
  if (n == 3 && s.size() == 10)
    ok = true;
  else if (n >= 5 && n <= 6)
    ok = true;
  else if (n == 7 && std::string(tail) == "Z")
    ok = true;
  if (!ok || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
    return std::nullopt;
  if (n == 5 && s.size() > 16 && s.substr(16) != "Z") return std::nullopt;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<std::int64_t>(timegm(&tm)) * 1'000'000'000LL;
}

std::string format_history(const std::vector<HistoryRow>& rows, Format format, std::size_t width) {
  if (format == Format::json) {
    json out = json::array();
    for (const auto& r : rows)
      out.push_back({{"run", r.run_id},
                     {"commit", r.git_commit},
                     {"branch", r.git_branch},
                     {"env", r.env_fingerprint},
                     {"started", format_time(r.started_ns)},
                     {"case", r.case_key},
                     {"kernel", r.kernel},
                     {"status", r.status},
                     {"metric", r.metric},
                     {"value", r.value}});
    return out.dump(2) + "\n";
  }
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"started", "run", "commit", "branch", "env", "case", "metric", "value"});
  for (const auto& r : rows)
    cells.push_back({format_time(r.started_ns),
                     format == Format::csv ? r.run_id : short_id(r.run_id, 8),
                     format == Format::csv ? r.git_commit : short_id(r.git_commit), r.git_branch,
                     r.env_fingerprint, r.case_key, r.metric, number(r.value)});
  if (format == Format::csv) {
    std::string out;
    for (const auto& c : cells) out += csv_line(c);
    return out;
  }
  if (rows.empty()) return "no matching history\n";
  // env, run, branch, started, then the metric (one for every row unless --metric names
  // several) and the commit: a smoke suite's keys and their values fit 80 columns.
  return table(cells, width, 5, {4, 1, 3, 0, 6, 2});
}

std::string format_changes(const std::vector<CaseChange>& changes, Format format,
                           std::size_t width) {
  if (format == Format::json) {
    json out = json::array();
    for (const auto& c : changes)
      out.push_back({{"case", c.case_key},
                     {"metric", c.metric},
                     {"env", c.env_fingerprint},
                     {"branch", c.git_branch},
                     {"commit_before", c.commit_before},
                     {"commit_after", c.commit_after},
                     {"within_one_commit", c.within_one_commit()},
                     {"run_before", c.run_before},
                     {"run_after", c.run_after},
                     {"at", format_time(c.at_ns)},
                     {"before", c.point.before_mean},
                     {"after", c.point.after_mean},
                     {"change", c.point.relative_change},
                     {"p_value", c.point.p_value},
                     {"permutation_p", c.point.permutation_p}});
    return out.dump(2) + "\n";
  }
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"case", "metric", "env", "commits", "before", "after", "change", "p"});
  for (const auto& c : changes) {
    const bool csv = format == Format::csv;
    std::string commits = fmt::format("{}..{}", csv ? c.commit_before : short_id(c.commit_before),
                                      csv ? c.commit_after : short_id(c.commit_after));
    cells.push_back({c.case_key, c.metric, c.env_fingerprint, commits, number(c.point.before_mean),
                     number(c.point.after_mean),
                     fmt::format("{:+.1f}%", 100 * c.point.relative_change),
                     fmt::format("{:.2g}", c.point.p_value)});
  }
  if (format == Format::csv) {
    std::string out;
    for (const auto& c : cells) out += csv_line(c);
    return out;
  }
  if (changes.empty()) return "no change points\n";
  std::string out = table(cells, width, 0, {2, 7, 4, 5});  // env, p, before, after
  const auto within = std::count_if(changes.begin(), changes.end(),
                                    [](const CaseChange& c) { return c.within_one_commit(); });
  if (within > 0)
    out += fmt::format(
        "{} change(s) between two runs of one commit (A..A): the machine or its load moved, not "
        "the code; attnprof bisect --from-change passes them over\n",
        within);
  return out;
}

std::string format_run_header(const core::Run& run) {
  std::string out = fmt::format("run     {}\ncommit  {} ({})\nstarted {}\nstatus  {}\nenv     {}\n",
                                run.id, run.git_commit.empty() ? "-" : run.git_commit,
                                run.git_branch.empty() ? "-" : run.git_branch,
                                format_time(run.started_ns), run.status, run.env.fingerprint());
  if (!run.pr.empty()) out += fmt::format("pr      {}\n", run.pr);
  if (!run.ci_url.empty()) out += fmt::format("ci      {}\n", run.ci_url);
  return out;
}

}  // namespace attnprof::store
