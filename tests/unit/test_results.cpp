// report::results: the table `attnprof run` prints, at 120 and 80 columns.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness/report/results.h"
#include "report_fixtures.h"
#include "store_fixtures.h"

using namespace attnprof;

TEST_SUITE("report::results") {
  TEST_CASE("results golden at 120 and 80 columns: keys and counts whole, columns left out") {
    core::Run run = testing::make_run("abc123", 1'700'000'000'000'000'000, 3);
    for (auto& c : run.cases) {
      c.summary.ci_low_ns = c.summary.median_ns * 0.99;
      c.summary.ci_high_ns = c.summary.median_ns * 1.01;
      c.summary.n = 12345;
      c.summary.converged = true;
      c.metrics["bandwidth.achieved_gbps"] = 21.5;
    }
    run.cases[1].spec.key = "bert-base/prefill/b1-s128-fp32-none/op:my_ns::attention";
    run.cases[2].status = core::CaseStatus::failed;
    run.cases[2].message = "max error 0.5 at [0, 3]\nsecond line";
    for (std::size_t width : {120, 80}) {
      const std::string text = report::results_table(run, width);
      testing::check_golden(fmt::format("results.{}.txt", width), text);
      for (const auto& c : run.cases) {
        const bool whole = text.find(c.spec.key + "\n") != std::string::npos ||
                           text.find(c.spec.key + " ") != std::string::npos;
        CHECK(whole);
      }
    }
    CHECK(report::results_table(run, 120).find("    12345    ") != std::string::npos);
    CHECK(report::results_table(run, 0).find("left out") == std::string::npos);
  }
}
