// report::html: a run's results and roofline, a gate's verdicts worst first with its A/B rounds,
// and a case's history chart.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness/core/stability.h"
#include "harness/report/html.h"
#include "report_fixtures.h"
#include "store_fixtures.h"

using namespace attnprof;

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Self-contained: nothing is fetched when the file opens (no src=, href= or url() to anywhere).
void check_self_contained(const std::string& html) {
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
}

}  // namespace

TEST_SUITE("report::html") {
  TEST_CASE("a run: results, a roofline with the device's roof, each case's cost matrix") {
    core::Run run = testing::make_run("abc123", 1'700'000'000'000'000'000);
    for (auto& c : run.cases) {
      c.metrics["bandwidth.achieved_gbps"] = 20;
      c.metrics["roofline.throughput.tflops"] = c.metrics["throughput.tflops"];
      c.metrics["roofline.throughput.fraction_of_peak"] = c.metrics["throughput.tflops"] / 50;
      c.metrics["roofline.bandwidth.achieved_gbps"] = 20;
      c.metrics["roofline.bandwidth.fraction_of_peak"] = 0.01;
    }
    run.cases[1].status = core::CaseStatus::failed;
    run.cases[1].message = "max error 0.5 <at> [0, 3]\nsecond line";
    run.cases[0].cost[0].bytes_allocated = 393216;
    const std::string html = report::html_run(run);
    check_self_contained(html);
    CHECK(html.find("<!DOCTYPE html>") == 0);
    CHECK(count(html, "<svg") == 1);
    CHECK(count(html, "class=\"point\"") == 2);
    CHECK(html.find("class=\"roof\"") != std::string::npos);
    CHECK(html.find("peaks: 50 TFLOP/s, 2000 GB/s") != std::string::npos);
    // Each dot numbered, the number's case named under the chart; the roof's source in a legend.
    CHECK(html.find("<text class=\"mark\"") != std::string::npos);
    CHECK(html.find("<tr><td class=\"n\">1</td><td>m/prefill/b1-s128-fp32-none/cpu.naive</td>") !=
          std::string::npos);
    CHECK(html.find("roof: the device&apos;s properties") != std::string::npos);
    CHECK(html.find("max error 0.5 &lt;at&gt; [0, 3] second line") != std::string::npos);
    CHECK(count(html, "<td>aten::bmm</td>") == 2);
    CHECK(html.find("<td class=\"n\">384.00 KiB</td>") != std::string::npos);  // as the console
    CHECK(html.find("393216") == std::string::npos);
    CHECK(report::case_peaks(run.cases[0]).gbps == doctest::Approx(2000));
  }

  TEST_CASE("a run's results say what the console says: unstable first, not checked") {
    core::Run run = testing::make_run("abc123", 1'700'000'000'000'000'000);
    for (auto& s : run.cases[0].samples) s.wait_ns = s.ns;  // waited for a CPU its whole call
    run.cases[0].metrics[core::kLoadMetric] = 4.1;
    run.cases[0].metrics[core::kCoresMetric] = 2;
    run.cases[1].reference = "none";
    for (auto& c : run.cases) c.summary.converged = true;
    const std::string html = report::html_run(run);
    CHECK(html.find("<tr class=\"unstable\"><td>m/prefill/b1-s128-fp32-none/cpu.naive</td>") !=
          std::string::npos);
    CHECK(html.find("<td>unstable: descheduled in 100% of samples (more than 50%); load 4.1 on 2 "
                    "cores</td>") != std::string::npos);
    CHECK(html.find("<td>not checked (reference: none)</td>") != std::string::npos);
  }

  TEST_CASE("a run's line leaves out what the run did not record") {
    core::Run run = testing::make_run("4d5e6f7a8b9c0d1e", 1'795'946'400'000'000'000LL);
    run.id = "0f1e2d3c";
    CHECK(report::html_run(run).find("<p>Run <code>0f1e2d3c</code>, started 2026-11-29 10:00, "
                                     "commit <code>4d5e6f7a8b9c</code> on branch "
                                     "<code>main</code>; device") != std::string::npos);
    run.git_commit.clear();
    run.git_branch.clear();
    const std::string html = report::html_run(run);
    CHECK(html.find("<p>Run <code>0f1e2d3c</code>, started 2026-11-29 10:00, no commit "
                    "recorded; device") != std::string::npos);
    CHECK(html.find("commit unknown") == std::string::npos);
    CHECK(html.find("<code></code>") == std::string::npos);
  }

  TEST_CASE("without peaks the roofline says so instead of drawing a roof") {
    core::Run run = testing::make_run("abc123", 1);
    for (auto& c : run.cases) c.metrics["bandwidth.achieved_gbps"] = 20;
    const std::string html = report::html_run(run);
    CHECK(html.find("class=\"roof\"") == std::string::npos);
    CHECK(html.find("Device peaks unknown") != std::string::npos);
    CHECK(html.find("which <code>run --no-trace</code> leaves out") != std::string::npos);
  }

  TEST_CASE("a gate: verdicts worst first with their colours; an A/B adds rounds and what moved") {
    report::GateReport r = testing::sample_report();
    std::string html = report::html_gate(r);
    check_self_contained(html);
    CHECK(html.find("<title>attnprof gate (compare): failed</title>") != std::string::npos);
    CHECK(html.find("<tr class=\"regression\"><td>llama-2-7b/prefill/b1-s2048") !=
          std::string::npos);
    CHECK(html.find("class=\"regression\"") < html.find("class=\"unchanged\""));
    r.mode = "ab";
    r.ab = report::AbDetail{};
    r.ab->base_label = "merge base";
    r.ab->head_label = "head";
    r.ab->cases.push_back({r.verdicts[1].key,
                           {{.base_first = true, .base_ns = 1000, .head_ns = 1120},
                            {.base_first = false, .base_ns = 990, .head_ns = 1130}},
                           {}});
    r.ab->cases[0].ops = report::diff_cost({{"aten::bmm", "[[1]]", "", 1, 100, 100}},
                                           {{"aten::bmm", "[[1]]", "", 1, 150, 150}});
    html = report::html_gate(r);
    CHECK(html.find("<h2>A/B: merge base → head</h2>") != std::string::npos);
    CHECK(html.find(std::string("<p class=\"note\">change and 99% CI are paired: ")) !=
          std::string::npos);
    CHECK(count(html, "<svg") == 1);  // the rounds; no roofline without metrics
    CHECK(count(html, "class=\"point\"") == 2);
    CHECK(html.find("<td>aten::bmm</td><td>[[1]]</td>") != std::string::npos);
    CHECK(html.find("A/A") == std::string::npos);
    r.ab->same_build = true;
    CHECK(report::html_gate(r).find("<p class=\"note\">A/A: both sides are the same build") !=
          std::string::npos);
  }

  TEST_CASE("a case's history from the store: points, a change point and an annotation") {
    testing::TempDir d;
    auto db = store::Database::open(d.file("h.db"));
    std::string accepted_run;
    for (int i = 0; i < 12; ++i) {
      core::Run run = testing::make_run(fmt::format("c{:02}", i), (i + 1) * 1'000'000'000LL, 1, 5,
                                        i < 6 ? 1000 : 1500);
      run.cases[0].summary.ci_low_ns = run.cases[0].summary.median_ns - 10;
      run.cases[0].summary.ci_high_ns = run.cases[0].summary.median_ns + 10;
      const std::string id = db.write_run(run);
      if (i == 6) accepted_run = id;
    }
    store::Annotation a;
    a.kind = store::AnnotationKind::accept;
    a.case_glob = "m/*";
    a.run_id = accepted_run;
    a.reason = "new tiling";
    a.author = "dev";
    db.add_annotation(a);
    const std::string key = "m/prefill/b1-s128-fp32-none/cpu.naive";
    const std::vector<store::CaseHistory> found = store::case_histories(db, key);
    REQUIRE(found.size() == 1);
    const store::CaseHistory& h = found[0];
    REQUIRE(h.points.size() == 12);
    CHECK(h.points[0].commit == "c00");
    CHECK(h.points[11].ci_high_ns == 1510);
    REQUIRE(h.changes.size() == 1);
    CHECK(h.changes[0].point.index == 6);
    REQUIRE(h.annotations.size() == 1);
    const std::string html = report::html_history(found, key);
    check_self_contained(html);
    CHECK(count(html, "class=\"point\"") == 12);
    CHECK(count(html, "class=\"change\"") == 1);
    CHECK(html.find("change +50.0% between c05 and c06") != std::string::npos);
    // Its label left of the line, where the lower medians leave the top empty, under the legend.
    CHECK(html.find("text-anchor=\"end\" fill=\"#cf222e\">+50.0%</text>") != std::string::npos);
    CHECK(html.find("<title>accept: new tiling (dev)</title>") != std::string::npos);
    CHECK_THROWS_AS(store::case_histories(db, "no/such/case"), util::InputError);
  }

  TEST_CASE("a glob's history draws every matching case, its x axis dated; too many are refused") {
    testing::TempDir d;
    auto db = store::Database::open(d.file("h.db"));
    for (int i = 0; i < 3; ++i) {  // 2026-11-29 10:00 UTC, a day apart
      core::Run run = testing::make_run(fmt::format("c{:02}", i),
                                        (1'795'946'400LL + i * 86400LL) * 1'000'000'000LL, 3);
      for (auto& c : run.cases) c.metrics[core::kDescheduledMetric] = i == 1 ? 0.38 : 0.0;
      // The newest run: a fifth of its samples descheduled without moving the median (stable).
      for (auto& c : run.cases)
        if (i == 2)
          c.metrics[core::kDescheduledMetric] = 0.2, c.metrics[core::kDescheduledShiftMetric] = 0.6;
      db.write_run(run);
    }
    const std::vector<store::CaseHistory> found = store::case_histories(db, "m/prefill/*");
    REQUIRE(found.size() == 3);
    const std::string html = report::html_history(found, "m/prefill/*");
    check_self_contained(html);
    CHECK(html.find("<title>attnprof history: m/prefill/* (3 cases)</title>") != std::string::npos);
    CHECK(html.find("3 cases match <code>m/prefill/*</code>") != std::string::npos);
    CHECK(count(html, "<svg") == 3);
    CHECK(count(html, "class=\"point\"") == 9);
    for (const auto& h : found) {
      CHECK(h.points.size() == 3);
      CHECK(html.find("<title>history of " + h.key + "</title>") != std::string::npos);
    }
    CHECK(count(html, "<tspan x=\"72.0\">11-29 10:00</tspan>") == 3);
    CHECK(html.find(">12-01 10:00</tspan><tspan x=\"744.0\" dy=\"12\">c02</tspan>") !=
          std::string::npos);
    CHECK(count(html, "class=\"legend\"") == 6);  // median and its interval, each chart
    // The busy machine's run is named in each case's runs, and counted in the summary; stored
    // without its shift, by the share rule it was stored under. The newest run is not named.
    CHECK(count(html, "<td>unstable: descheduled in 38% of samples</td>") == 3);
    CHECK(found[0].points[2].stability.shift == 0.6);
    CHECK(html.find("descheduled in 20%") == std::string::npos);
    CHECK(count(html, "<tr class=\"unstable\">") == 3);
    CHECK(html.find("<th>unstable runs</th>") != std::string::npos);
    CHECK(found[0].points[0].stability.descheduled == 0.0);
    for (int i = 3; i < 52; ++i) {
      core::Run wide = testing::make_run("w", 1'795'946'400'000'000'000LL, 1);
      wide.cases[0].spec.key = fmt::format("m/prefill/many{:02}/cpu.naive", i);
      db.write_run(wide);
    }
    CHECK_THROWS_WITH_AS(store::case_histories(db, "m/prefill/*"),
                         doctest::Contains("matches 52 cases, more than the 50 one report draws"),
                         util::InputError);
  }
}
