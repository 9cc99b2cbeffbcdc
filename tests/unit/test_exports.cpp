#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness/report/exports.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;
using nlohmann::json;
using testing::make_run;

namespace {

// Two measured cases, the second without an interval (stored before one was recorded), and a
// failed third that has no figure.
core::Run three_case_run() {
  core::Run run = make_run("c0ffee", 1767225600000000000, 3);
  run.id = "run-1";
  run.cases[0].summary.ci_low_ns = 990;
  run.cases[0].summary.ci_high_ns = 1010;
  run.cases[0].spec.model.name = "bert-base";
  run.cases[0].spec.model.heads = 12;
  run.cases[1].summary.ci_low_ns = run.cases[1].summary.ci_high_ns = 0;
  run.cases[2].status = core::CaseStatus::failed;
  return run;
}

store::HistoryRow row(std::string run, std::int64_t at_s, std::string key, double value,
                      std::string env = "e1") {
  store::HistoryRow r;
  r.run_id = std::move(run);
  r.git_commit = "commit-" + r.run_id;
  r.git_branch = "main";
  r.env_fingerprint = std::move(env);
  r.started_ns = at_s * 1'000'000'000;
  r.case_key = std::move(key);
  r.metric = "summary.median_ns";
  r.value = value;
  return r;
}

std::string input_error(const std::vector<store::HistoryRow>& rows) {
  try {
    report::to_otava(rows);
  } catch (const util::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("report::exports") {
  TEST_CASE("formats are named as --format spells them; three of them hold one run") {
    CHECK(report::parse_export_format("bmf") == report::ExportFormat::bmf);
    CHECK(report::parse_export_format("otava") == report::ExportFormat::otava);
    CHECK_FALSE(report::parse_export_format("BMF"));
    CHECK(report::holds_one_run(report::ExportFormat::pytorch));
    CHECK_FALSE(report::holds_one_run(report::ExportFormat::otava));
    CHECK_FALSE(report::holds_one_run(report::ExportFormat::jsonl));
  }

  TEST_CASE("bmf: each measured case's median as Bencher's latency, bounded by its interval") {
    const auto run = three_case_run();
    const json j = json::parse(report::to_bmf(run));
    REQUIRE(j.size() == 2);  // the failed case has no figure
    const auto& first = j.at(run.cases[0].spec.key).at("latency");
    CHECK(first.at("value") == 1000.0);
    CHECK(first.at("lower_value") == 990.0);
    CHECK(first.at("upper_value") == 1010.0);
    const auto& second = j.at(run.cases[1].spec.key).at("latency");
    CHECK(second.at("value") == 1001.0);
    CHECK_FALSE(second.contains("lower_value"));  // no interval: no bounds, not zeros
    CHECK_FALSE(j.contains(run.cases[2].spec.key));
  }

  TEST_CASE("gab: customSmallerIsBetter entries in nanoseconds, the range the half-interval") {
    const auto run = three_case_run();
    const json j = json::parse(report::to_gab(run));
    REQUIRE(j.is_array());
    REQUIRE(j.size() == 2);
    CHECK(j[0].at("name") == run.cases[0].spec.key);
    CHECK(j[0].at("unit") == "ns");
    CHECK(j[0].at("value") == 1000.0);
    CHECK(j[0].at("range") == "± 10.0");
    CHECK(j[0].at("extra") ==
          "median of 5 samples; 95% interval [990.0, 1010.0] ns; attnprof run run-1 at c0ffee");
    CHECK_FALSE(j[1].contains("range"));
    CHECK(j[1].at("extra") == "median of 5 samples; attnprof run run-1 at c0ffee");
  }

  TEST_CASE("pytorch: one v3 record per case, every extra_info a map of strings") {
    auto run = three_case_run();
    run.env.fields = {
        {"device.kind", "cuda"}, {"device.name", "NVIDIA H100"}, {"cpu.model", "Xeon"}};
    const json j = json::parse(report::to_pytorch(run));
    REQUIRE(j.size() == 2);
    const auto& r = j[0];
    CHECK(r.at("benchmark").at("name") == "attnprof");
    CHECK(r.at("benchmark").at("dtype") == "fp32");
    CHECK(r.at("benchmark").at("extra_info").at("case") == run.cases[0].spec.key);
    CHECK(r.at("model").at("name") == "bert-base");
    CHECK(r.at("model").at("backend") == "cpu.naive");
    CHECK(r.at("model").at("extra_info").at("heads") == "12");
    CHECK(r.at("metric").at("name") == "summary.median_ns");
    CHECK(r.at("metric").at("benchmark_values") == json::array({1000.0}));
    CHECK(r.at("metric").at("extra_info").at("ci_low_ns") == "990");
    const auto& runner = r.at("runners").at(0);
    CHECK(runner.at("gpu_info") == "NVIDIA H100");
    CHECK(runner.at("gpu_count") == 1);
    CHECK(runner.at("cpu_info") == "Xeon");
    // A case without a preset is named by its key's first part.
    CHECK(j[1].at("model").at("name") == "m");
    for (const auto& rec : j)
      for (const auto* part : {"benchmark", "model", "metric"})
        for (const auto& [k, v] : rec.at(part).at("extra_info").items())
          CHECK_MESSAGE(v.is_string(), part, ".extra_info.", k);
  }

  TEST_CASE("otava: a row per run, oldest first; a case missing from a run is left out") {
    const auto out =
        report::to_otava({row("r1", 1767225600, "a/x", 100), row("r2", 1767229200, "a/x", 130.5),
                          row("r2", 1767229200, "b,y", 7),  // needs quoting
                          row("r1", 1767225600, "b,y", 6), row("r2", 1767229200, "c/z", 1)});
    CHECK(out.csv ==
          "time,commit,branch,run,a/x,\"b,y\"\n"
          "2026-01-01T00:00:00Z,commit-r1,main,r1,100,6\n"
          "2026-01-01T01:00:00Z,commit-r2,main,r2,130.5,7\n");
    CHECK(out.runs == 2);
    CHECK(out.cases == std::vector<std::string>{"a/x", "b,y"});
    CHECK(out.left_out == std::vector<std::string>{"c/z"});
  }

  TEST_CASE("otava: runs of two environments are refused, naming both") {
    CHECK(input_error({row("r1", 1, "a", 1, "e1"), row("r2", 2, "a", 1, "e2")}) ==
          "--format otava: the runs span 2 environments (e1, e2): a series is one machine's; "
          "pick one with --env");
  }

  TEST_CASE("otava: the configuration names the CSV and each case, smaller is better") {
    CHECK(report::otava_config("attnprof", "out/h.csv", {"a/x", "b\"y"}) ==
          "# Apache Otava's test for attnprof's export (attnprof export --format otava).\n"
          "tests:\n  \"attnprof\":\n    type: csv\n    file: \"out/h.csv\"\n"
          "    time_column: time\n    attributes: [commit, branch, run]\n    metrics:\n"
          "      \"a/x\":\n        direction: -1\n      \"b\\\"y\":\n        direction: -1\n");
  }
}
