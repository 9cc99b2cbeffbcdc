// report::results_table and status_counts: the table `attnprof run` prints, at 120 and 80
// columns, and what a case whose output was not checked (reference none) says.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness/report/results.h"
#include "report_fixtures.h"
#include "store_fixtures.h"

using namespace attnprof;

namespace {

core::CaseResult measured(const std::string& key, const std::string& reference) {
  core::CaseResult r;
  r.spec.key = key;
  r.spec.kernel = key.substr(key.rfind('/') + 1);
  r.status = core::CaseStatus::ok;
  r.reference = reference;
  r.summary.n = 12;
  r.summary.median_ns = 41500;
  r.summary.ci_low_ns = 41300;
  r.summary.ci_high_ns = 41700;
  r.summary.converged = true;
  return r;
}

}  // namespace

TEST_SUITE("report::results") {
  TEST_CASE("a block or layer case's note says its attention share") {
    core::CaseResult r = measured("bert-base/prefill/b1-s128-fp32-none-layer/eager", "sdpa.math");
    r.spec.level = core::Level::layer;
    r.metrics["attention.share"] = 0.0431;
    CHECK(report::case_note(r, false) == "attention 4.3% of the layer");
    r.metrics.erase("attention.share");
    CHECK(report::case_note(r, false) == "");
  }

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

  TEST_CASE(
      "a case not checked says so in its note and in the counts; a checked one says nothing") {
    core::Run run;
    run.cases = {measured("tiny/prefill/b1-s32-bf16-none/aoti:mine.pt2", "aoti:mine-fp32.pt2"),
                 measured("tiny/prefill/b1-s32-bf16-none-seed2/aoti:mine.pt2", "none")};
    CHECK(report::results_table(run, 0) ==
          "case                                               status  median   ±ci    samples  "
          "TFLOP/s  GB/s  note\n" +
              std::string(128, '-') +
              "\n"
              "tiny/prefill/b1-s32-bf16-none/aoti:mine.pt2        ok      41.5 us  0.48%       12\n"
              "tiny/prefill/b1-s32-bf16-none-seed2/aoti:mine.pt2  ok      41.5 us  0.48%       12  "
              "               not checked (reference: none)\n");
    CHECK(report::status_counts(run) ==
          "2 cases: 2 ok, 0 failed, 0 skipped, 0 error; 1 not checked (reference: none)");
    // Wrapped to the table's width, every line within it; one line at width 0 (--wide).
    const std::string narrow = report::status_counts(run, 40);
    CHECK(narrow.find('\n') != std::string::npos);
    for (std::size_t at = 0; at <= narrow.size();) {
      const std::size_t end = std::min(narrow.find('\n', at), narrow.size());
      CHECK(end - at <= 40);
      at = end + 1;
    }
    CHECK(report::status_counts(run, 0) == report::status_counts(run));
    CHECK(report::status_counts(run, 120) == report::status_counts(run));
    run.cases.pop_back();
    CHECK(report::status_counts(run) == "1 cases: 1 ok, 0 failed, 0 skipped, 0 error");
  }
}
