#include <doctest/doctest.h>

#include <cmath>

#include "harness/report/verdicts.h"

using namespace attnprof;

namespace {

gate::CaseVerdict verdict(std::string key, gate::Verdict v, double ratio) {
  gate::CaseVerdict c;
  c.key = std::move(key);
  c.verdict = v;
  c.ratio = ratio;
  c.ci_low = ratio - 0.01;
  c.ci_high = ratio + 0.01;
  c.tolerance = 0.05;
  c.baseline_median_ns = 1000;
  c.candidate_median_ns = 1000 * ratio;
  c.reason = "r";
  return c;
}

}  // namespace

TEST_SUITE("report::verdicts") {
  TEST_CASE("annotations: errors for regressions, warnings for inconclusive, keys escaped") {
    std::vector<gate::CaseVerdict> v{
        verdict("m/prefill/b1/op:ns::attn", gate::Verdict::regression, 1.2),
        verdict("m/prefill/b1/eager", gate::Verdict::inconclusive, 1.03),
        verdict("m/prefill/b1/sdpa.math", gate::Verdict::unchanged, 1.0)};
    const std::string a = report::verdict_annotations(v);
    CHECK(a ==
          "::error title=attnprof m/prefill/b1/op%3Ans%3A%3Aattn::regression +20.00%25 (99%25 CI "
          "[+19.00%25, +21.00%25]): r\n"
          "::warning title=attnprof m/prefill/b1/eager::inconclusive +3.00%25 (99%25 CI "
          "[+2.00%25, +4.00%25]): r\n");
  }

  TEST_CASE("counts name every verdict kind; accepted and ignored only when present") {
    std::vector<gate::CaseVerdict> v{verdict("a", gate::Verdict::regression, 1.2),
                                     verdict("b", gate::Verdict::unchanged, 1.0)};
    CHECK(report::verdict_counts(v) ==
          "gate: 1 regression, 0 failed, 0 missing, 0 inconclusive, 0 improvement, 0 new, 1 "
          "unchanged");
    v.push_back(verdict("c", gate::Verdict::accepted, 1.3));
    CHECK(report::verdict_counts(v).find(", 1 accepted, 0 ignored") != std::string::npos);
  }

  TEST_CASE("markdown: regressions first, unchanged collapsed, notes quoted") {
    std::vector<gate::CaseVerdict> v{verdict("same", gate::Verdict::unchanged, 1.0),
                                     verdict("slow", gate::Verdict::regression, 1.2)};
    core::Run run;
    run.id = "r1";
    const std::string md = report::verdict_markdown(v, run, "baselines/x.yaml", {"**note**"});
    CHECK(md.find("## attnprof gate") == 0);
    CHECK(md.find("> **note**") != std::string::npos);
    CHECK(md.find("`slow`") < md.find("<details>"));
    CHECK(md.find("`same`") > md.find("<details>"));
  }

  TEST_CASE("JSON has no NaN: unknown numbers are null") {
    gate::CaseVerdict c = verdict("n", gate::Verdict::new_case, std::nan(""));
    c.p_value = std::nan("");
    const std::string j = report::verdict_json({c}, core::Run{});
    CHECK(j.find("NaN") == std::string::npos);
    CHECK(j.find("\"ratio\": null") != std::string::npos);
  }
}
