// store::render: the sparkline, history as table, CSV and JSON, times, format names.
#include <doctest/doctest.h>

#include <vector>

#include "harness/store/changes.h"
#include "harness/store/render.h"

using namespace attnprof;
using store::Format;

namespace {

std::vector<store::HistoryRow> two_rows() {
  store::HistoryRow a;
  a.run_id = "0123456789abcdef";
  a.git_commit = "deadbeefcafe0000";
  a.git_branch = "main";
  a.env_fingerprint = "e1";
  a.started_ns = 1'764'495'435'000'000'000;  // 2025-11-30T09:37:15Z
  a.case_key = "m/k";
  a.kernel = "cpu.naive";
  a.status = "ok";
  a.metric = "summary.median_ns";
  a.value = 1234.5;
  store::HistoryRow b = a;
  b.case_key = "m/with,comma";
  b.value = 2e6;
  return {a, b};
}

}  // namespace

// Expected texts stay one line each, as printed.
// clang-format off
TEST_SUITE("store::render") {
  TEST_CASE("sparkline: scaled min to max, flat series, empty series") {
    CHECK(store::sparkline(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}) == "▁▂▃▄▅▆▇█");
    CHECK(store::sparkline(std::vector<double>{10, 80, 10}) == "▁█▁");
    CHECK(store::sparkline(std::vector<double>{5, 5, 5}) == "▄▄▄");
    CHECK(store::sparkline(std::vector<double>{}) == "");
  }

  TEST_CASE("history as a table, CSV (quoted where needed) and JSON") {
    auto rows = two_rows();
    CHECK(store::format_history(rows, Format::table) ==
          "started               run       commit        branch  env  case          metric             value\n"
          "---------------------------------------------------------------------------------------------------\n"
          "2025-11-30T09:37:15Z  01234567  deadbeefcafe  main    e1   m/k           summary.median_ns   1234.5\n"
          "2025-11-30T09:37:15Z  01234567  deadbeefcafe  main    e1   m/with,comma  summary.median_ns  2000000\n");
    // At 80 columns: env, run and branch left out, the case key whole.
    CHECK(store::format_history(rows, Format::table, 80) ==
          "started               commit        case          metric             value\n"
          "----------------------------------------------------------------------------\n"
          "2025-11-30T09:37:15Z  deadbeefcafe  m/k           summary.median_ns   1234.5\n"
          "2025-11-30T09:37:15Z  deadbeefcafe  m/with,comma  summary.median_ns  2000000\n"
          "(left out to fit 80 columns: run, branch, env; --wide prints them)\n");
    // A smoke suite's key at 80: the started time and the metric go too (the short env comes
    // back), no row is broken.
    for (auto& r : rows) r.case_key = "bert-base/prefill/b1-s128-fp32-causal/" + r.case_key;
    CHECK(store::format_history(rows, Format::table, 80) ==
          "commit        env  case                                                value\n"
          "------------------------------------------------------------------------------\n"
          "deadbeefcafe  e1   bert-base/prefill/b1-s128-fp32-causal/m/k            1234.5\n"
          "deadbeefcafe  e1   bert-base/prefill/b1-s128-fp32-causal/m/with,comma  2000000\n"
          "(left out to fit 80 columns: started, run, branch, metric; --wide prints them)\n");
    rows = two_rows();
    CHECK(store::format_history(rows, Format::csv) ==
          "started,run,commit,branch,env,case,metric,value\n"
          "2025-11-30T09:37:15Z,0123456789abcdef,deadbeefcafe0000,main,e1,m/k,summary.median_ns,1234.5\n"
          "2025-11-30T09:37:15Z,0123456789abcdef,deadbeefcafe0000,main,e1,\"m/with,comma\",summary.median_ns,2000000\n");
    auto json = store::format_history({rows[0]}, Format::json);
    CHECK(json.find("\"case\": \"m/k\"") != std::string::npos);
    CHECK(json.find("\"value\": 1234.5") != std::string::npos);
    CHECK(store::format_history({}, Format::table) == "no matching history\n");
  }

  TEST_CASE("changes: a change between two runs of one commit is said to be the machine's") {
    store::CaseChange c;
    c.case_key = "m/k";
    c.metric = "summary.median_ns";
    c.env_fingerprint = "e1";
    c.commit_before = "aaaaaaaaaaaa0000";
    c.commit_after = "bbbbbbbbbbbb0000";
    c.point.before_mean = 240;
    c.point.after_mean = 480;
    c.point.relative_change = 1.0;
    std::vector<store::CaseChange> changes{c};
    const std::string note = "between two runs of one commit (A..A)";
    auto text = store::format_changes(changes, Format::table);
    CHECK(text.find("aaaaaaaaaaaa..bbbbbbbbbbbb") != std::string::npos);
    CHECK(text.find(note) == std::string::npos);
    CHECK(store::format_changes(changes, Format::json).find("\"within_one_commit\": false") != std::string::npos);
    c.commit_before = c.commit_after;
    changes.push_back(c);
    text = store::format_changes(changes, Format::table);
    CHECK(text.find("bbbbbbbbbbbb..bbbbbbbbbbbb") != std::string::npos);
    CHECK(text.find("1 change(s) " + note + ": the machine or its load moved, not the code") != std::string::npos);
    CHECK(store::format_changes(changes, Format::json).find("\"within_one_commit\": true") != std::string::npos);
    CHECK(store::format_changes(changes, Format::csv).find(note) == std::string::npos);
  }

  TEST_CASE("times: printed in UTC, read as dates, date-times or days ago") {
    CHECK(store::format_time(0) == "1970-01-01T00:00:00Z");
    const std::int64_t s = 1'000'000'000;
    CHECK(store::parse_time("2025-11-30", 0) == 1'764'460'800 * s);
    CHECK(store::parse_time("2025-11-30T09:37:15Z", 0) == 1'764'495'435 * s);
    CHECK(store::parse_time("2025-11-30T09:37", 0) == 1'764'495'420 * s);
    CHECK(store::parse_time("7d", 10 * 86400 * s) == 3 * 86400 * s);
    CHECK_FALSE(store::parse_time("yesterday", 0));
    CHECK_FALSE(store::parse_time("2025-13-01", 0));
    CHECK_FALSE(store::parse_time("2025-11-30x", 0));
  }

  TEST_CASE("formats by name") {
    CHECK(store::parse_format("csv") == Format::csv);
    CHECK_FALSE(store::parse_format("xml"));
  }
}
// clang-format on
