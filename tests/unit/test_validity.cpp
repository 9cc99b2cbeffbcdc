// gate::validity: when a run is environmental, and what that does to its verdicts.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "harness/gate/validity.h"
#include "harness/util/error.h"

using namespace attnprof;

namespace {

// `slower` cases 10% slower (regressions), `faster` 10% faster, the rest unchanged; tol 5%.
std::vector<gate::CaseVerdict> verdicts(int slower, int faster, int same) {
  std::vector<gate::CaseVerdict> v;
  auto add = [&](gate::Verdict verdict, double ratio) {
    gate::CaseVerdict c;
    c.key = "case" + std::to_string(v.size());
    c.verdict = verdict;
    c.ratio = ratio;
    c.tolerance = 0.05;
    c.reason = "r";
    v.push_back(c);
  };
  for (int i = 0; i < slower; ++i) add(gate::Verdict::regression, 1.10);
  for (int i = 0; i < faster; ++i) add(gate::Verdict::improvement, 0.90);
  for (int i = 0; i < same; ++i) add(gate::Verdict::unchanged, 1.0);
  return v;
}

}  // namespace

TEST_SUITE("gate::validity") {
  TEST_CASE("one kernel's regression in a suite of twenty is judged normally") {
    auto v = verdicts(4, 0, 16);  // 20%
    auto r = gate::assess_run(v);
    CHECK_FALSE(r.environmental);
    CHECK(r.compared == 20);
    CHECK(r.slower == 4);
    CHECK(gate::mark_environmental(v, r) == 0);
    CHECK(gate::exit_code(v) == util::exit_gate_failed);
  }
  TEST_CASE("most cases slower: environmental, regressions become inconclusive and pass") {
    auto v = verdicts(7, 0, 13);  // 35%
    auto r = gate::assess_run(v);
    REQUIRE(r.environmental);
    CHECK(r.reason ==
          "7 of 20 compared cases (35%) are slower beyond their tolerance, more than "
          "30%: that looks like the machine, not the code");
    CHECK(gate::mark_environmental(v, r) == 7);
    CHECK(v[0].verdict == gate::Verdict::inconclusive);
    CHECK(v[0].reason == "environmental run, so not judged (would be regression: r)");
    CHECK(v[10].verdict == gate::Verdict::unchanged);
    CHECK(gate::exit_code(v) == util::exit_pass);
    gate::Options strict;
    strict.strict = true;
    CHECK(gate::exit_code(v, strict) == util::exit_gate_failed);
  }
  TEST_CASE("inconclusive moves count: a noisy run is caught even when nothing is significant") {
    auto v = verdicts(0, 0, 12);
    for (int i = 0; i < 4; ++i) {
      v[i].verdict = gate::Verdict::inconclusive;
      v[i].ratio = 1.08;
    }
    CHECK(gate::assess_run(v).environmental);  // 4/12 = 33%
  }
  TEST_CASE("slowdowns and speed-ups both widespread: environmental") {
    auto v = verdicts(3, 3, 14);  // 15% each way
    auto r = gate::assess_run(v);
    REQUIRE(r.environmental);
    CHECK(r.reason ==
          "slowdowns and speed-ups are both widespread (3 slower, 3 faster of 20 "
          "compared cases, each more than 10%): that looks like noise, not the code");
    CHECK(gate::mark_environmental(v, r) == 6);
    CHECK(v[3].verdict == gate::Verdict::inconclusive);
  }
  TEST_CASE("too few compared cases: no judgement") {
    auto v = verdicts(3, 0, 2);
    CHECK_FALSE(gate::assess_run(v).environmental);
    gate::ValidityOptions o;
    o.min_cases = 5;
    CHECK(gate::assess_run(v, o).environmental);
  }
  TEST_CASE("accepted, ignored, new and failed cases are not counted") {
    auto v = verdicts(3, 0, 7);
    v[0].verdict = gate::Verdict::accepted;
    v[1].verdict = gate::Verdict::ignored;
    gate::CaseVerdict extra;
    extra.verdict = gate::Verdict::new_case;
    extra.ratio = std::numeric_limits<double>::quiet_NaN();
    v.push_back(extra);
    auto r = gate::assess_run(v);
    CHECK(r.compared == 8);
    CHECK(r.slower == 1);
    CHECK_FALSE(r.environmental);
  }
}
