// report::verdicts: workflow annotations, counts, and the markdown report's exact text and
// limits.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "harness/report/verdicts.h"
#include "report_fixtures.h"

using namespace attnprof;
using testing::check_golden;
using testing::sample_report;
using testing::verdict;

TEST_SUITE("report::verdicts") {
  TEST_CASE("annotations: errors for regressions, warnings for inconclusive, keys escaped") {
    report::GateReport r;
    r.verdicts = {verdict("m/prefill/b1/op:ns::attn", gate::Verdict::regression, 1.2),
                  verdict("m/prefill/b1/eager", gate::Verdict::inconclusive, 1.03),
                  verdict("m/prefill/b1/sdpa.math", gate::Verdict::unchanged, 1.0)};
    CHECK(report::annotations(r) ==
          "::error title=attnprof m/prefill/b1/op%3Ans%3A%3Aattn::regression +20.00%25 (99%25 CI "
          "[+19.00%25, +21.00%25]): r\n"
          "::warning title=attnprof m/prefill/b1/eager::inconclusive +3.00%25 (99%25 CI "
          "[+2.00%25, +4.00%25]): r\n");
  }

  TEST_CASE("annotations: a multi-line error is one annotation, and an environmental run warns") {
    report::GateReport r = sample_report();
    r.validity = gate::RunValidity{true, 10, 9, 0, "9 of 10 cases moved the same way"};
    const std::string a = report::annotations(r);
    CHECK(a.find("::error title=attnprof llama-2-7b/decode/b16-kv16384-bf16-none/cuda.decode::"
                 "failed: RuntimeError: CUDA error: an illegal memory access was encountered "
                 "CUDA kernel errors") != std::string::npos);
    CHECK(
        a.find("::warning title=attnprof environmental run::9 of 10 cases moved the same way\n") !=
        std::string::npos);
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

  TEST_CASE("markdown golden: outcome, worst first (bigger regression first), unchanged folded") {
    report::GateReport r = sample_report();
    r.notes = {"environmental run: 9 of 10 cases moved; measure again"};
    const std::string md = report::markdown_report(r);
    check_golden("gate.md", md);
    CHECK(md.find("## attnprof gate: failed") == 0);
    CHECK(md.find("b4-s4096") < md.find("b1-s2048"));  // +31% before +12%
    CHECK(md.find("b1-s2048") < md.find("cuda.decode"));
    CHECK(md.find("sdpa.math`") > md.find("<details><summary>2 unchanged case(s)"));
  }

  TEST_CASE("markdown stays under its limit by leaving whole rows out, and says how many") {
    report::GateReport r;
    for (int i = 0; i < 3000; ++i)
      r.verdicts.push_back(verdict(fmt::format("suite/work/b{}-s128-fp32-none/sdpa.math", i),
                                   i % 3 ? gate::Verdict::unchanged : gate::Verdict::regression,
                                   i % 3 ? 1.0 : 1.2));
    const std::string md = report::markdown_report(r, 60000);
    CHECK(md.size() < 60000);
    CHECK(md.find("more case(s) not shown here: see the JSON report.") != std::string::npos);
    // Every table row is whole: each line of a table starts and ends with a pipe.
    std::size_t start = 0;
    while (start < md.size()) {
      const std::size_t end = md.find('\n', start);
      const std::string line = md.substr(start, end - start);
      if (!line.empty() && line[0] == '|') CHECK(line.back() == '|');
      start = end + 1;
    }
    CHECK(report::markdown_report(r, 1 << 20).find("not shown") == std::string::npos);
  }

  TEST_CASE("JUnit golden: regressions and failures fail, inconclusive skips, --strict fails it") {
    report::GateReport r = sample_report();
    const std::string xml = report::junit_report(r);
    check_golden("gate.junit.xml", xml);
    CHECK(xml.find("tests=\"7\" failures=\"3\" errors=\"0\" skipped=\"1\"") != std::string::npos);
    r.strict = true;
    CHECK(report::junit_report(r).find("tests=\"7\" failures=\"4\" errors=\"0\" skipped=\"0\"") !=
          std::string::npos);
  }

  TEST_CASE("JSON golden: versioned schema, unknown numbers are null, never NaN") {
    report::GateReport r = sample_report();
    r.validity = gate::RunValidity{false, 5, 2, 0, ""};
    const std::string j = report::json_report(r);
    check_golden("gate.json", j);
    CHECK(j.find("NaN") == std::string::npos);
    const auto parsed = nlohmann::json::parse(j);
    CHECK(parsed["schema"] == "attnprof-gate");
    CHECK(parsed["schema_version"] == report::kJsonSchemaVersion);
    CHECK(parsed["result"]["counts"]["regression"] == 2);
    CHECK(parsed["verdicts"][3]["ratio"].is_null());
    CHECK_FALSE(parsed.contains("ab"));
  }

  TEST_CASE("console golden at 120 and 80 columns: keys whole, columns left out; --wide all") {
    report::GateReport r = sample_report();
    r.verdicts.push_back(verdict("bert-base/prefill/b1-s128-fp32-none/op:my_ns::attention",
                                 gate::Verdict::unchanged, 1.001, "interval inside ±5.0%"));
    for (std::size_t width : {120, 80}) {
      const std::string text = report::console_report(r, width);
      check_golden(fmt::format("console.{}.txt", width), text);
      std::size_t start = 0, widest = 0;
      while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        widest = std::max(widest, report::display_width(text.substr(start, end - start)));
        start = end + 1;
      }
      CHECK(widest <= width);
      for (const auto& v : r.verdicts) CHECK(text.find(v.key) != std::string::npos);
    }
    const std::string wide = report::console_report(r, 0);
    CHECK(wide.find("llama-2-7b/decode/b16-kv16384-bf16-none/cuda.decode      failed") !=
          std::string::npos);
    CHECK(wide.find("RuntimeError: CUDA error: an illegal memory access was encountered CUDA "
                    "kernel errors might be asynchronously reported at some other API call For "
                    "debugging consider passing CUDA_LAUNCH_BLOCKING=1\n") != std::string::npos);
    CHECK(wide.find("left out") == std::string::npos);
  }

  TEST_CASE("an unstable case's whole reason, to its last clause, in the console and markdown") {
    // The reason compare wrote for a smoke case on a loaded machine (about 450 characters).
    const std::string reason =
        "would be inconclusive (1.251x (99% CI 0.606-2.580, history of 11 runs, n=23): straddles "
        "the +-10.0% tolerance; the run-to-run spread (24.4% over 11 runs) is what is wide, so "
        "more samples would not tell; measure base and head side by side (attnprof ab)), but "
        "unstable: descheduled in 100% of samples; load 6.1 on 2 cores: samples from two machine "
        "states, not one figure to judge";
    report::GateReport r = sample_report();
    r.verdicts = {verdict("bert-base/prefill/b1-s128-fp32-none/sdpa.auto",
                          gate::Verdict::inconclusive, 1.251, reason)};
    for (std::size_t width : {120, 80}) {
      std::string text = report::console_report(r, width);
      for (std::size_t at = text.find("\n    "); at != std::string::npos;
           at = text.find("\n    ", at))
        text.replace(at, 5, " ");  // the wrapped lines joined again
      CHECK(text.find("unstable: descheduled in 100% of samples; load 6.1 on 2 cores: samples "
                      "from two machine states, not one figure to judge") != std::string::npos);
    }
    CHECK(report::markdown_report(r).find(reason + " |") != std::string::npos);
  }

  TEST_CASE("an A/B's reports say that its change is paired and its medians are not") {
    report::GateReport r = sample_report();
    CHECK(report::markdown_report(r).find(report::kPairedNote) == std::string::npos);
    r.mode = "ab";
    const std::string md = report::markdown_report(r);
    CHECK(md.find(std::string(report::kPairedNote) + "\n\n| case |") != std::string::npos);
    CHECK(report::console_report(r, 0).find(std::string(report::kPairedNote) + "\n") !=
          std::string::npos);
  }

  TEST_CASE("an A/B's op diff: worst first, ops on one side only included, in every format") {
    core::CostRow bmm{"aten::bmm", "[[1,8,64,64]]", "", 2, 2000, 2000};
    core::CostRow softmax{"aten::softmax", "[[1,8,64,64]]", "", 1, 500, 500};
    core::CostRow bmm_slow = bmm;
    bmm_slow.cpu_self_ns = 3000;
    core::CostRow extra{"aten::contiguous", "[[1,8,64,64]]", "", 1, 400, 400};
    const auto ops = report::diff_cost({bmm, softmax}, {bmm_slow, softmax, extra});
    REQUIRE(ops.size() == 3);
    CHECK(ops[0].name == "aten::bmm");
    CHECK(ops[0].base_self_ns == 1000);  // per call
    CHECK(ops[0].head_self_ns == 1500);
    CHECK(ops[0].delta_ns() == 1000);
    CHECK(ops[1].name == "aten::contiguous");
    CHECK(ops[1].base_calls == 0);
    CHECK(ops[2].delta_ns() == 0);

    report::GateReport r;
    r.mode = "ab";
    r.verdicts = {verdict("m/w/s/eager", gate::Verdict::regression, 1.3)};
    r.ab = report::AbDetail{};
    r.ab->cases.push_back({"m/w/s/eager",
                           {{.base_first = true, .base_ns = 1000, .head_ns = 1300},
                            {.base_first = false, .base_ns = 1010, .head_ns = 1290}},
                           ops});
    const std::string md = report::markdown_report(r);
    CHECK(md.find("<details><summary>What moved in <code>m/w/s/eager</code> (+30.00%)") !=
          std::string::npos);
    CHECK(md.find("| `aten::bmm` [[1,8,64,64]] | 2 | 1.00 us | 1.50 us | 1.00 us |") !=
          std::string::npos);
    const auto j = nlohmann::json::parse(report::json_report(r));
    CHECK(j["ab"]["cases"][0]["rounds"].size() == 2);
    CHECK(j["ab"]["cases"][0]["ops"][0]["head_self_ns_per_call"] == 1500);
  }

  TEST_CASE("an A/A says so in every format; an A/B of two builds and a pair judged again do not") {
    const std::string aa = "A/A: both sides are the same build";
    report::GateReport r = sample_report();
    r.mode = "ab";
    r.notes = {"environmental run: 9 of 10 cases moved; measure again"};
    r.ab = report::AbDetail{};
    r.ab->same_build = true;
    CHECK(report::console_report(r).find("\n" + aa) != std::string::npos);
    CHECK(report::markdown_report(r).find("\n> " + aa) != std::string::npos);
    CHECK(report::junit_report(r).find("<property name=\"note\" value=\"" + aa) !=
          std::string::npos);
    auto j = nlohmann::json::parse(report::json_report(r));
    CHECK(j["ab"]["same_build"] == true);
    REQUIRE(j["notes"].size() == 2);
    CHECK(j["notes"][0] == report::kSameBuildNote);  // first, before the run's own notes
    CHECK(j["result"]["exit_code"] == 1);            // the gate decides as before

    for (std::optional<bool> other : {std::optional<bool>(false), std::optional<bool>()}) {
      r.ab->same_build = other;
      CHECK(report::console_report(r).find(aa) == std::string::npos);
      CHECK(report::markdown_report(r).find(aa) == std::string::npos);
      CHECK(report::junit_report(r).find(aa) == std::string::npos);
      j = nlohmann::json::parse(report::json_report(r));
      CHECK(j["notes"].size() == 1);
      if (other)
        CHECK(j["ab"]["same_build"] == false);
      else
        CHECK(j["ab"]["same_build"].is_null());  // compare --pair: not known
    }
  }

  TEST_CASE("findings stand beside the time verdicts in every format; failing ones fail JUnit") {
    report::GateReport r;
    r.run.id = "run";
    r.baseline = "b.yaml";
    r.verdicts = {verdict("m/w/b8/op:t::variant", gate::Verdict::unchanged, 1.0, "within"),
                  verdict("m/w/b8/eager", gate::Verdict::unchanged, 1.0, "within")};
    r.verdicts[0].findings.kernels = {true, true, {"aten::flash"}, {"aten::math"}, "", ""};
    r.verdicts[0].findings.list = {
        {"kernels changed", "kernels changed: aten::flash -> aten::math", true}};
    r.verdicts[1].findings.accuracy = {true, true, 1e-7, 2e-5, 1e-8, 3e-6, 0x1p-23, 4};
    r.verdicts[1].findings.list = {
        {"accuracy changed", "accuracy changed: max abs error 1e-07 -> 2e-05 (168x)", false}};
    r.exit_code = 1;
    CHECK(report::console_report(r, 0).find(
              "findings beside the time verdicts (what ran, how accurate):\n"
              "  m/w/b8/op:t::variant: kernels changed: aten::flash -> aten::math (fails the gate: "
              "--fail-on-kernel-change)\n"
              "  m/w/b8/eager: accuracy changed: max abs error 1e-07 -> 2e-05 (168x)\n"
              "gate: 0 regression, 0 failed, 0 missing, 0 inconclusive, 0 improvement, 0 new, 2 "
              "unchanged; findings: 1 kernels changed, 1 accuracy changed\n") != std::string::npos);
    const std::string md = report::markdown_report(r);
    CHECK(md.find("### Findings beside the time verdicts\n\n| case | finding | gate |") !=
          std::string::npos);
    CHECK(md.find(
              "| `m/w/b8/op:t::variant` | kernels changed: aten::flash -> aten::math | fails |") !=
          std::string::npos);
    CHECK(report::annotations(r) ==
          "::error title=attnprof m/w/b8/op%3At%3A%3Avariant::kernels changed: aten::flash -> "
          "aten::math (fails the gate: --fail-on-kernel-change)\n"
          "::warning title=attnprof m/w/b8/eager::accuracy changed: max abs error 1e-07 -> 2e-05 "
          "(168x)\n");
    const std::string junit = report::junit_report(r);
    CHECK(junit.find("failures=\"1\"") != std::string::npos);
    CHECK(junit.find("<failure type=\"kernels changed\" message=\"unchanged +0.00% (99% CI "
                     "[-1.00%, +1.00%]): within; kernels changed: aten::flash -&gt; aten::math") !=
          std::string::npos);
    const auto j = nlohmann::json::parse(report::json_report(r));
    CHECK(j["result"]["findings"]["kernels changed"] == 1);
    CHECK(j["result"]["findings"]["accuracy changed"] == 1);
    CHECK(j["verdicts"][0]["kernels"]["changed"] == true);
    CHECK(j["verdicts"][0]["kernels"]["removed"] == nlohmann::json({"aten::flash"}));
    CHECK(j["verdicts"][0]["findings"][0]["fails"] == true);
    CHECK(j["verdicts"][0]["accuracy"]["changed"].is_null());  // not known: no errors compared
    CHECK(j["verdicts"][1]["accuracy"]["head_max_abs_error"] == 2e-5);
    CHECK(j["verdicts"][1]["accuracy"]["floor"] == 0x1p-23);
    CHECK(j["verdicts"][1]["kernels"]["changed"].is_null());
    // Without findings, nothing is added to the counts line.
    r.verdicts[0].findings = r.verdicts[1].findings = {};
    CHECK(report::console_report(r, 0).find("findings") == std::string::npos);
  }

  TEST_CASE(
      "an A/B's memory figures: every one in markdown and JSON, the moved ones on the console") {
    core::CaseResult base, head;
    base.metrics = {{"memory.rss_growth_bytes", 0},
                    {"memory.minor_faults_per_call", 0.02},
                    {"memory.major_faults_per_call", 0}};
    head.metrics = base.metrics;
    head.metrics["memory.minor_faults_per_call"] = 9984.5;
    head.metrics["memory.rss_growth_bytes"] = 512 << 10;  // under 1 MiB: not a move
    const auto memory = report::diff_memory(base, head);
    REQUIRE(memory.size() == 3);
    CHECK(memory[0].metric == "memory.rss_growth_bytes");
    CHECK_FALSE(memory[0].moved);
    CHECK(memory[1].moved);
    CHECK_FALSE(memory[2].moved);
    report::GateReport r;
    r.mode = "ab";
    r.verdicts = {verdict("m/w/b8/op:t::variant", gate::Verdict::unchanged, 1.0)};
    r.ab = report::AbDetail{};
    r.ab->base_label = "base abc";
    r.ab->head_label = "head def";
    r.ab->cases.push_back({"m/w/b8/op:t::variant", {}, {}, memory});
    CHECK(report::console_report(r, 0).find(
              "memory figures that moved between the sides (over the measured calls):\n"
              "case                  figure                        base abc  head def\n"
              "----------------------------------------------------------------------\n"
              "m/w/b8/op:t::variant  memory.minor_faults_per_call      0.02   9984.50\n") !=
          std::string::npos);
    const std::string md = report::markdown_report(r);
    CHECK(md.find("<details><summary>Memory over the measured calls, base and head</summary>") !=
          std::string::npos);
    CHECK(md.find("| `m/w/b8/op:t::variant` | memory.rss_growth_bytes | 0 B | 512.00 KiB |") !=
          std::string::npos);
    const auto j = nlohmann::json::parse(report::json_report(r));
    CHECK(j["ab"]["cases"][0]["memory"][1]["head"] == 9984.5);
    CHECK(j["ab"]["cases"][0]["memory"][1]["moved"] == true);
    r.ab->cases[0].memory = report::diff_memory(base, base);
    CHECK(report::console_report(r, 0).find("memory figures") == std::string::npos);
    // What two sides of one build differ by (the most seen over 300 unchanged case pairs): not
    // a move. A leak of 64 KiB a call over 100 calls, or 64 KiB of fresh pages a call, is.
    head = base;
    head.metrics["memory.minor_faults_per_call"] = 3.5;
    head.metrics["memory.rss_growth_bytes"] = 2.25 * (1 << 20);
    for (const auto& m : report::diff_memory(base, head)) CHECK_FALSE(m.moved);
    head.metrics["memory.minor_faults_per_call"] = 16.02;
    head.metrics["memory.rss_growth_bytes"] = 6400 << 10;
    for (const auto& m : report::diff_memory(base, head))
      CHECK(m.moved == (m.metric != "memory.major_faults_per_call"));
  }
}
