// report::results_table and status_counts: what `attnprof run` prints under its cases, here
// what a case whose output was not checked (reference none) says.
#include <doctest/doctest.h>

#include "harness/report/results.h"

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
    run.cases.pop_back();
    CHECK(report::status_counts(run) == "1 cases: 1 ok, 0 failed, 0 skipped, 0 error");
  }
}
