// report::html: a run's results and roofline, a gate's verdicts worst first with its A/B rounds,
// and a case's history chart.
#include <doctest/doctest.h>
#include <fmt/format.h>

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
    const std::string html = report::html_run(run);
    check_self_contained(html);
    CHECK(html.find("<!DOCTYPE html>") == 0);
    CHECK(count(html, "<svg") == 1);
    CHECK(count(html, "class=\"point\"") == 2);
    CHECK(html.find("class=\"roof\"") != std::string::npos);
    CHECK(html.find("peaks: 50.0 TFLOP/s, 2000 GB/s") != std::string::npos);
    CHECK(html.find("max error 0.5 &lt;at&gt; [0, 3] second line") != std::string::npos);
    CHECK(count(html, "<td>aten::bmm</td>") == 2);
    CHECK(report::case_peaks(run.cases[0]).gbps == doctest::Approx(2000));
  }

  TEST_CASE("without peaks the roofline says so instead of drawing a roof") {
    core::Run run = testing::make_run("abc123", 1);
    for (auto& c : run.cases) c.metrics["bandwidth.achieved_gbps"] = 20;
    const std::string html = report::html_run(run);
    CHECK(html.find("class=\"roof\"") == std::string::npos);
    CHECK(html.find("Device peaks unknown") != std::string::npos);
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
    store::CaseHistory h = store::case_history(db, key);
    REQUIRE(h.points.size() == 12);
    CHECK(h.points[0].commit == "c00");
    CHECK(h.points[11].ci_high_ns == 1510);
    REQUIRE(h.changes.size() == 1);
    CHECK(h.changes[0].point.index == 6);
    REQUIRE(h.annotations.size() == 1);
    const std::string html = report::html_history(h);
    check_self_contained(html);
    CHECK(count(html, "class=\"point\"") == 12);
    CHECK(count(html, "class=\"change\"") == 1);
    CHECK(html.find("change +50.0% between c05 and c06") != std::string::npos);
    CHECK(html.find("<title>accept: new tiling (dev)</title>") != std::string::npos);
    CHECK_THROWS_AS(store::case_history(db, "no/such/case"), util::InputError);
  }
}
