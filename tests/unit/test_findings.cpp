// gate::find_changes and the gate around it: a changed kernel set and a less accurate output are
// findings beside the time verdict, with what must not count (order, counts, unknown sets, an
// exact kernel's zero error), and the options and annotations that make them fail the gate or not.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "harness/core/metric_names.h"
#include "harness/gate/annotations.h"
#include "harness/gate/compare.h"
#include "harness/gate/findings.h"
#include "harness/gate/paired.h"

using namespace attnprof;

namespace {

constexpr const char* kFlash = "aten::_scaled_dot_product_flash_attention_for_cpu";
constexpr const char* kMath = "aten::_scaled_dot_product_attention_math";

gate::Traits ran(std::vector<std::string> kernels, std::string backend = "") {
  gate::Traits t;
  t.kernels = std::move(kernels);
  t.backend = std::move(backend);
  return t;
}

gate::Traits checked(double max, std::optional<double> mean = std::nullopt,
                     std::string reference = "sdpa.math") {
  gate::Traits t;
  t.reference = std::move(reference);
  t.max_abs_error = max;
  t.mean_abs_error = mean;
  return t;
}

gate::Findings find(const gate::Traits& base, const gate::Traits& head,
                    core::DType dtype = core::DType::fp32, gate::FindingRules rules = {}) {
  return gate::find_changes(base, head, dtype, rules);
}

// A run of one ok case with `samples` equal timings, and a baseline of the same timings.
struct Judged {
  gate::Baseline baseline;
  core::Run run;
};
Judged same_time(const gate::Traits& base, const core::CaseResult& head) {
  Judged j;
  gate::BaselineCase b;
  b.median_ns = 1000;
  b.n = 20;
  b.samples_ns.assign(20, 1000);
  b.traits = base;
  j.baseline.cases[head.spec.key] = b;
  j.run.cases.push_back(head);
  for (int i = 0; i < 20; ++i) j.run.cases[0].samples.push_back({1000, 0});
  return j;
}

core::CaseResult head_case(std::vector<std::string> kernels) {
  core::CaseResult r;
  r.spec.key = "m/prefill/b8-s128-fp32-none/op:attnprof_test::attention_variant";
  r.kernels = std::move(kernels);
  r.reference = "sdpa.math";
  r.max_abs_error = 2e-7;
  r.metrics[core::kMeanAbsErrorMetric] = 3e-8;
  return r;
}

}  // namespace

TEST_SUITE("gate::findings") {
  TEST_CASE("another backend's op is 'kernels changed', named base -> head") {
    const auto f = find(ran({"aten::empty", kFlash, "aten::scaled_dot_product_attention"}),
                        ran({"aten::empty", kMath, "aten::scaled_dot_product_attention"}));
    CHECK(f.kernels.known);
    CHECK(f.kernels.changed);
    CHECK(f.kernels.removed == std::vector<std::string>{kFlash});
    CHECK(f.kernels.added == std::vector<std::string>{kMath});
    REQUIRE(f.list.size() == 1);
    CHECK(f.list[0].kind == "kernels changed");
    CHECK(f.list[0].text ==
          "kernels changed: aten::_scaled_dot_product_flash_attention_for_cpu -> "
          "aten::_scaled_dot_product_attention_math");
    CHECK_FALSE(f.fails());
    CHECK(find(ran({kFlash}), ran({kMath}), core::DType::fp32, {4, true, false}).fails());
  }

  TEST_CASE("the backend sdpa.auto chose is part of it; one-sided and long lists are named") {
    auto f = find(ran({kFlash}, "flash"), ran({kMath}, "math"));
    REQUIRE(f.list.size() == 1);
    CHECK(f.list[0].text ==
          std::string("kernels changed: ") + kFlash + " -> " + kMath + "; backend flash -> math");
    f = find(ran({}, "flash"), ran({}, "math"));
    CHECK(f.list.at(0).text == "kernels changed: backend flash -> math");
    f = find(ran({"a"}), ran({"a", "b", "c", "d", "e", "f"}));
    CHECK(f.list.at(0).text == "kernels changed: (none) -> b, c, d, e and 1 more");
    CHECK(f.kernels.added.size() == 5);  // the JSON report has every one
  }

  TEST_CASE("the same set is no change; an unrecorded set or backend is unknown, not changed") {
    CHECK_FALSE(find(ran({"a", "b"}, "flash"), ran({"a", "b"}, "flash")).kernels.changed);
    CHECK_FALSE(find(ran({"b", "a", "a"}), ran({"a", "b"})).kernels.changed);  // order, repeats
    CHECK(find(ran({"a", "b"}, "flash"), ran({"a", "b"}, "flash")).kernels.known);
    gate::Traits old = ran({});
    old.kernels.reset();  // stored before sets were, or run with --no-trace
    const auto f = find(old, ran({"a"}));
    CHECK_FALSE(f.kernels.known);
    CHECK_FALSE(f.kernels.changed);
    CHECK(f.list.empty());
    // A backend recorded on one side only says nothing either.
    CHECK(find(ran({"a"}, ""), ran({"a"}, "math")).list.empty());
  }

  TEST_CASE("a fourfold larger error is 'accuracy changed', a smaller growth is not") {
    auto f = find(checked(2e-7, 3e-8), checked(9e-6, 1.2e-6));
    CHECK(f.accuracy.known);
    CHECK(f.accuracy.changed);
    REQUIRE(f.list.size() == 1);
    CHECK(f.list[0].text ==
          "accuracy changed: max abs error 2e-07 -> 9e-06 (45x), mean abs error 3e-08 -> 1.2e-06 "
          "(10.1x); more than 4x the baseline's (errors below fp32's epsilon 1.19e-07 count as "
          "it), still within the check's tolerance");
    CHECK_FALSE(find(checked(2e-7), checked(7e-7)).accuracy.changed);  // 3.5x
    CHECK(
        find(checked(2e-7), checked(7e-7), core::DType::fp32, {3, false, false}).accuracy.changed);
    CHECK(find(checked(2e-7), checked(9e-6), core::DType::fp32, {4, false, true}).fails());
  }

  TEST_CASE("a compile 2x longer or with a new graph break is 'compile changed'") {
    auto compiled = [](double ms, double graphs, double breaks) {
      gate::Traits t;
      t.compile_ms = ms;
      t.compile_graphs = graphs;
      t.compile_graph_breaks = breaks;
      return t;
    };
    auto f = find(compiled(30000, 1, 0), compiled(75300, 1, 0));
    CHECK(f.compile.known);
    REQUIRE(f.list.size() == 1);
    CHECK(f.list[0].kind == "compile changed");
    CHECK(f.list[0].text ==
          "compile changed: 30.0 s -> 75.3 s (2.51x, beyond 2x); graphs 1 -> 1, graph breaks 0 -> 0");
    CHECK_FALSE(f.fails());
    CHECK(find(compiled(30000, 1, 0), compiled(12000, 1, 0)).compile.changed);  // 2.5x faster
    CHECK_FALSE(find(compiled(30000, 1, 0), compiled(45000, 1, 0)).compile.changed);  // 1.5x
    f = find(compiled(30000, 1, 0), compiled(31000, 2, 1));
    REQUIRE(f.list.size() == 1);
    CHECK(f.list[0].text ==
          "compile changed: 30.0 s -> 31.0 s (1.03x); graphs 1 -> 2, graph breaks 0 -> 1 (a new "
          "graph break)");
    gate::FindingRules fail;
    fail.fail_on_compile = true;
    CHECK(find(compiled(30000, 1, 0), compiled(31000, 2, 1), core::DType::fp32, fail).fails());
    CHECK_FALSE(find(compiled(30000, 2, 1), compiled(31000, 1, 0)).compile.changed);  // fewer
    CHECK_FALSE(find(gate::Traits{}, compiled(31000, 2, 1)).compile.known);  // eager baseline
  }

  TEST_CASE("an exact kernel's zero error is floored at the dtype's epsilon: 0 -> 1e-7 is fine") {
    CHECK_FALSE(find(checked(0, 0.0), checked(1e-7, 1e-8)).accuracy.changed);
    CHECK_FALSE(find(checked(0), checked(4.7e-7)).accuracy.changed);  // under 4 x 2^-23
    CHECK(find(checked(0), checked(4.8e-7)).accuracy.changed);
    // bf16 rounds at 2^-7: what is a change in fp32 is its own rounding there.
    CHECK_FALSE(find(checked(1e-3), checked(2e-2), core::DType::bf16).accuracy.changed);
    CHECK(find(checked(1e-3), checked(4e-2), core::DType::bf16).accuracy.changed);
    CHECK(gate::accuracy_floor(core::DType::fp16) == doctest::Approx(9.765625e-4));
  }

  TEST_CASE("the mean alone can change it; errors against other references are not compared") {
    CHECK(find(checked(1e-5, 1e-7), checked(1.1e-5, 2e-6)).accuracy.changed);
    const auto other = find(checked(1e-7), checked(1e-5, std::nullopt, "aoti:mine-fp32.pt2"));
    CHECK_FALSE(other.accuracy.known);
    CHECK(other.list.empty());
    CHECK_FALSE(find(checked(1e-7, std::nullopt, "none"), checked(1e-5, std::nullopt, "none"))
                    .accuracy.known);
    gate::Traits unchecked;  // a case stored before its check recorded anything
    CHECK_FALSE(find(unchecked, checked(1e-5)).accuracy.known);
  }

  TEST_CASE("compare: a finding stands beside an unchanged time verdict; it fails when asked") {
    Judged j = same_time(ran({"aten::empty", kFlash}), head_case({"aten::empty", kMath}));
    auto v = gate::compare(j.baseline, j.run);
    REQUIRE(v.size() == 1);
    CHECK(v[0].verdict == gate::Verdict::unchanged);
    REQUIRE(v[0].findings.list.size() == 1);
    CHECK(v[0].findings.list[0].kind == "kernels changed");
    CHECK(gate::exit_code(v) == 0);  // a warning
    gate::Options o;
    o.findings.fail_on_kernel_change = true;
    v = gate::compare(j.baseline, j.run, o);
    CHECK(gate::exit_code(v, o) == 1);
    // Accepted like a regression: it stays in the reports, saying by whom.
    store::Annotation a;
    a.id = 3;
    a.kind = store::AnnotationKind::accept;
    a.case_glob = "m/*";
    a.reason = "math on purpose";
    a.author = "alice";
    CHECK(gate::apply_annotations(v, j.run, {a}) == 1);
    CHECK_FALSE(v[0].findings.fails());
    CHECK(v[0].findings.list[0].text.ends_with("(accepted by alice (#3): math on purpose)"));
    CHECK(gate::exit_code(v, o) == 0);
  }

  TEST_CASE("energy per call 35% up at the same time is 'energy changed', never failing the gate") {
    gate::Traits base = ran({"aten::empty", kFlash});
    base.joules_per_call = 0.52;
    core::CaseResult head = head_case({"aten::empty", kFlash});
    head.metrics[core::kEnergyPerCallMetric] = 0.702;
    Judged j = same_time(base, head);
    auto v = gate::compare(j.baseline, j.run);
    REQUIRE(v.size() == 1);
    CHECK(v[0].verdict == gate::Verdict::unchanged);
    REQUIRE(v[0].findings.list.size() == 1);
    CHECK(v[0].findings.list[0].kind == "energy changed");
    CHECK(v[0].findings.list[0].text ==
          "energy changed: 520 mJ -> 702 mJ per call (+35.0%, beyond 10%)");
    CHECK(gate::exit_code(v) == 0);
    // Within the tolerance, or unknown on one side: no finding.
    CHECK(find(base,
               [] {
                 gate::Traits t;
                 t.joules_per_call = 0.55;
                 return t;
               }())
              .list.empty());
    CHECK_FALSE(find(base, gate::Traits{}).energy.known);
  }

  TEST_CASE("compare: no findings for a failed case, across machines, or without a baseline") {
    Judged j = same_time(ran({kFlash}), head_case({kMath}));
    j.run.cases[0].status = core::CaseStatus::failed;
    CHECK(gate::compare(j.baseline, j.run)[0].findings.list.empty());
    j = same_time(ran({kFlash}), head_case({kMath}));
    j.baseline.fingerprint = "0123456789abcdef";
    j.run.env.fields = {{"device.name", "cpu"}};
    CHECK(gate::compare(j.baseline, j.run)[0].findings.list.empty());
    j = same_time(ran({kFlash}), head_case({kMath}));
    j.baseline.cases.clear();
    CHECK(gate::compare(j.baseline, j.run)[0].findings.list.empty());
  }

  TEST_CASE("compare_paired: both sides ok, the findings at the case's dtype") {
    gate::PairedCase pc;
    pc.key = "k";
    pc.dtype = core::DType::bf16;
    pc.base = gate::PairedSide{core::CaseStatus::ok, "", "", "sdpa.math", checked(1e-3)};
    pc.head = gate::PairedSide{core::CaseStatus::ok, "", "", "sdpa.math", checked(2e-2)};
    std::vector<gate::PairedCase> cases{pc};
    CHECK(gate::compare_paired(cases)[0].findings.list.empty());  // within bf16's floor x 4
    cases[0].head->traits = checked(5e-2);
    auto v = gate::compare_paired(cases);
    REQUIRE(v[0].findings.list.size() == 1);
    CHECK(v[0].findings.list[0].kind == "accuracy changed");
    cases[0].head->status = core::CaseStatus::failed;
    CHECK(gate::compare_paired(cases)[0].findings.list.empty());
  }
}
