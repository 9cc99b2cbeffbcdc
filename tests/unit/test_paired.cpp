#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "harness/gate/annotations.h"
#include "harness/gate/paired.h"
#include "harness/util/error.h"
#include "tests/unit/paired_simulation.h"

using namespace attnprof;

namespace {

gate::Options tol(double t) {
  gate::Options o;
  o.tolerance = t;
  return o;
}

// Rounds whose head/base ratios are exactly `ratios` (base 100 us), head first in odd rounds.
std::vector<gate::PairedRound> rounds_of(const std::vector<double>& ratios) {
  std::vector<gate::PairedRound> out;
  for (std::size_t i = 0; i < ratios.size(); ++i) out.push_back({1e5, 1e5 * ratios[i], i % 2 == 1});
  return out;
}

gate::PairedCase ok_case(const std::string& key, std::vector<gate::PairedRound> rounds) {
  gate::PairedCase c;
  c.key = key;
  c.base = c.head = gate::PairedSide{};
  c.rounds = std::move(rounds);
  return c;
}

}  // namespace

TEST_SUITE("gate::paired") {
  TEST_CASE("effect, interval and p are the signed-rank statistics of the log ratios") {
    // R's example differences as log ratios: (pseudo)median 0.46, exact 99% interval
    // -0.1135..0.987 (ranks 2 and 44 of 45), two-sided p 0.039.
    const std::vector<double> d = {0.952, -0.147, 1.022, 0.430, 0.620, 0.590, 0.490, -0.080, 0.010};
    std::vector<double> ratios;
    for (double x : d) ratios.push_back(std::exp(x));
    std::vector<gate::PairedCase> cases{ok_case("k", rounds_of(ratios))};
    auto v = gate::compare_paired(cases, tol(0.05));
    REQUIRE(v.size() == 1);
    CHECK(v[0].method == "paired");
    CHECK(v[0].ratio == doctest::Approx(std::exp(0.46)).epsilon(1e-9));
    CHECK(v[0].ci_low == doctest::Approx(std::exp(-0.1135)).epsilon(1e-9));
    CHECK(v[0].ci_high == doctest::Approx(std::exp(0.987)).epsilon(1e-9));
    CHECK(v[0].p_value == doctest::Approx(0.0390625).epsilon(1e-9));
    CHECK(v[0].baseline_n == 9);
    CHECK(v[0].verdict == gate::Verdict::inconclusive);
    CHECK(v[0].reason ==
          "1.584x (99% CI 0.893-2.683, paired, 9 rounds): straddles the +-5.0% tolerance; more "
          "rounds would tell");
  }
  TEST_CASE("a clear slowdown is a regression with a reason a person can act on") {
    std::vector<double> ratios;
    for (int i = 0; i < 16; ++i) ratios.push_back(1.10 + 0.001 * i);
    std::vector<gate::PairedCase> cases{ok_case("attn/k", rounds_of(ratios))};
    auto v = gate::compare_paired(cases, tol(0.02));
    REQUIRE(v.size() == 1);
    CHECK(v[0].verdict == gate::Verdict::regression);
    CHECK(v[0].baseline_median_ns == 1e5);
    CHECK(v[0].candidate_median_ns == doctest::Approx(1e5 * 1.1075));
    CHECK(v[0].reason ==
          "1.107x (99% CI 1.103-1.111, paired, 16 rounds): slower beyond the 2.0% tolerance; "
          "adjusted p 3.1e-05");
    CHECK(gate::exit_code(v) == util::exit_gate_failed);
  }
  TEST_CASE("a change seen only while one side sat in a slow state is not claimed") {
    // Head 2.5x slower for the first 24 rounds (a descheduled thread), then level with base.
    std::vector<double> ratios;
    for (int i = 0; i < 32; ++i) ratios.push_back((i < 24 ? 2.5 : 1.0) * (1 + 0.0001 * i));
    std::vector<gate::PairedCase> cases{ok_case("k", rounds_of(ratios))};
    auto v = gate::compare_paired(cases, tol(0.05));
    REQUIRE(v.size() == 1);
    INFO(v[0].reason);
    CHECK(v[0].verdict == gate::Verdict::inconclusive);
    CHECK(v[0].reason.find("the rounds came in stretches (3 runs above and below their median "
                           "where 17 were expected") != std::string::npos);
    CHECK(v[0].reason.find("in one of them the ratio was 1.003x") != std::string::npos);
    // A real 40% slowdown with the same stretches holds in the better half too.
    for (auto& r : ratios) r *= 1.4;
    cases = {ok_case("k", rounds_of(ratios))};
    v = gate::compare_paired(cases, tol(0.05));
    CHECK(v[0].verdict == gate::Verdict::regression);
  }
  TEST_CASE("fewer rounds than a 99% interval needs: inconclusive, never unchanged") {
    std::vector<gate::PairedCase> cases{
        ok_case("k", rounds_of({1, 1.001, 0.999, 1, 1.0, 1.002, 0.998}))};
    auto v = gate::compare_paired(cases, tol(0.05));
    CHECK(v[0].verdict == gate::Verdict::inconclusive);
    CHECK(v[0].reason == "7 round(s) with a time on both sides; a 99% interval needs at least 8");
    CHECK(gate::min_rounds(0.99) == 8);
    CHECK(gate::min_rounds(0.95) == 6);
  }
  TEST_CASE("statuses: failed, missing, new, skipped, timed differently") {
    auto side = [](core::CaseStatus s, std::string msg, std::string timing = "") {
      return gate::PairedSide{s, std::move(msg), std::move(timing)};
    };
    std::vector<gate::PairedCase> cases(7);
    cases[0].key = "failed";
    cases[0].base = side(core::CaseStatus::ok, "");
    cases[0].head = side(core::CaseStatus::failed, "max abs error 0.3 > 0.01");
    cases[1].key = "gone";
    cases[1].base = side(core::CaseStatus::ok, "");
    cases[2].key = "skipped-in-head";
    cases[2].base = side(core::CaseStatus::ok, "");
    cases[2].head = side(core::CaseStatus::skipped, "needs a GPU");
    cases[3].key = "added";
    cases[3].head = side(core::CaseStatus::ok, "");
    cases[4].key = "fixed";
    cases[4].base = side(core::CaseStatus::failed, "max abs error 1.5 > 0.01");
    cases[4].head = side(core::CaseStatus::ok, "");
    cases[5].key = "both-skipped";
    cases[5].base = cases[5].head = side(core::CaseStatus::skipped, "needs a GPU");
    cases[6] = ok_case("retimed", rounds_of(std::vector<double>(16, 1.0)));
    cases[6].base->timing = "cuda.cold.cupti";
    cases[6].head->timing = "cuda.graph.cupti";
    auto v = gate::compare_paired(cases);
    REQUIRE(v.size() == 6);
    CHECK(v[0].verdict == gate::Verdict::failed);
    CHECK(v[0].reason == "failed: max abs error 0.3 > 0.01");
    CHECK(v[1].verdict == gate::Verdict::missing);
    CHECK(v[1].reason == "in base but not in head");
    CHECK(v[2].verdict == gate::Verdict::missing);
    CHECK(v[2].reason == "in base but skipped in head: needs a GPU");
    CHECK(v[3].verdict == gate::Verdict::new_case);
    CHECK(v[3].reason == "not in base");
    CHECK(v[4].verdict == gate::Verdict::new_case);
    CHECK(v[4].reason == "base failed: max abs error 1.5 > 0.01; nothing to compare against");
    CHECK(v[5].key == "retimed");
    CHECK(v[5].verdict == gate::Verdict::inconclusive);
    CHECK(v[5].reason ==
          "timed as cuda.graph.cupti (CUDA-graph batches, CUPTI kernel time) in head but "
          "cuda.cold.cupti (single cold calls, CUPTI kernel time) in base: not the same "
          "quantity, not compared");
    CHECK(gate::exit_code(v) == util::exit_gate_failed);
  }
  TEST_CASE("Benjamini-Hochberg across the cases; tolerance from the case, else the default") {
    // Two cases 3% slower with the same evidence, one with a 2% and one with a 5% tolerance.
    std::vector<double> ratios;
    for (int i = 0; i < 12; ++i) ratios.push_back(1.03 + 0.0005 * i);
    std::vector<gate::PairedCase> cases{ok_case("a", rounds_of(ratios)),
                                        ok_case("b", rounds_of(ratios))};
    cases[0].tolerance = 0.02;
    gate::Options o;
    o.default_tolerance = 0.05;
    auto v = gate::compare_paired(cases, o);
    CHECK(v[0].tolerance == 0.02);
    CHECK(v[1].tolerance == 0.05);
    CHECK(v[0].verdict == gate::Verdict::regression);
    CHECK(v[1].verdict == gate::Verdict::unchanged);
    CHECK(v[0].p_adjusted == doctest::Approx(v[0].p_value));  // two equal p: BH leaves them
    // With 40 cases of which only one has any evidence, its p is multiplied up past alpha.
    std::vector<gate::PairedCase> many{ok_case("a", rounds_of(ratios))};
    many[0].tolerance = 0.02;
    stats::Rng rng(3);
    for (int c = 0; c < 39; ++c) {
      std::vector<double> flat;
      for (int i = 0; i < 12; ++i) flat.push_back(std::exp(0.2 * rng.normal()));
      many.push_back(ok_case(fmt::format("n{}", c), rounds_of(flat)));
    }
    auto w = gate::compare_paired(many, o);
    CHECK(w[0].p_value < 0.001);
    CHECK(w[0].p_adjusted > 0.01);
    CHECK(w[0].verdict == gate::Verdict::inconclusive);
  }
  TEST_CASE("annotations accept a paired regression like any other") {
    std::vector<double> ratios(16, 1.2);
    for (int i = 0; i < 16; ++i) ratios[i] += 0.001 * i;
    std::vector<gate::PairedCase> cases{ok_case("llama/decode/k", rounds_of(ratios))};
    auto v = gate::compare_paired(cases, tol(0.02));
    REQUIRE(v[0].verdict == gate::Verdict::regression);
    core::Run head;
    head.id = "run-1";
    head.cases.emplace_back().spec.key = "llama/decode/k";
    store::Annotation a;
    a.kind = store::AnnotationKind::accept;
    a.case_glob = "llama/*";
    a.reason = "new tiling";
    a.author = "alice";
    auto trailers =
        gate::parse_accept_trailers("x\n\nPerf-Accept: llama/* new tiling\n", "run-1", "alice");
    CHECK(gate::apply_annotations(v, head, trailers) == 1);
    CHECK(v[0].verdict == gate::Verdict::accepted);
    CHECK(v[0].reason.find("new tiling; was regression: 1.2") != std::string::npos);
    CHECK(gate::exit_code(v) == util::exit_pass);
  }
  TEST_CASE("an order effect is named, and cancelled by the random order") {
    // The side that goes first is 4% slower; head and base are otherwise equal.
    std::vector<gate::PairedRound> r;
    stats::Rng rng(9);
    for (int i = 0; i < 32; ++i) {
      const bool head_first = rng.uniform() < 0.5;
      const double first = 1.04 * std::exp(0.003 * rng.normal()),
                   second = std::exp(0.003 * rng.normal());
      r.push_back(
          {1e5 * (head_first ? second : first), 1e5 * (head_first ? first : second), head_first});
    }
    std::vector<gate::PairedCase> cases{ok_case("k", r)};
    auto v = gate::compare_paired(cases, tol(0.05));
    CHECK(v[0].verdict == gate::Verdict::unchanged);
    INFO(v[0].reason);
    CHECK(v[0].reason.find("; order effect: the side that runs first in a round is 4.") !=
          std::string::npos);
    CHECK(v[0].reason.find("% slower (the random order cancels it") != std::string::npos);
  }
}

// The point of pairing: the machine's drift is common to both sides of a round.
TEST_SUITE("gate::paired under drift") {
  constexpr int trials = 200, rounds = 64;
  TEST_CASE("A/A under random-walk drift and +-60% steps: unchanged in >= 99% of trials") {
    int unchanged = 0, false_alarms = 0;
    for (int t = 0; t < trials; ++t) {
      testing::Machine m(1000 + t, {});
      auto v = testing::judge_paired(m.interleaved(1e5, 1e5, rounds), tol(0.02));
      unchanged += v.verdict == gate::Verdict::unchanged;
      false_alarms +=
          v.verdict == gate::Verdict::regression || v.verdict == gate::Verdict::improvement;
    }
    CHECK(unchanged >= 0.99 * trials);
    CHECK(false_alarms == 0);
  }
  TEST_CASE("a planted 5% slowdown under the same drift is a regression at 2% tolerance") {
    int found = 0;
    for (int t = 0; t < trials; ++t) {
      testing::Machine m(5000 + t, {});
      found += testing::judge_paired(m.interleaved(1e5, 1.05e5, rounds), tol(0.02)).verdict ==
               gate::Verdict::regression;
    }
    CHECK(found >= 0.99 * trials);
  }
  TEST_CASE("the same data judged unpaired cannot tell: pooled samples are inconclusive") {
    // Interleaved data pooled per side: no bias, but the drift makes both pools so wide that
    // neither an A/A nor a 5% slowdown can be told apart from a 2% change.
    int aa_unchanged = 0, slow_found = 0;
    for (int t = 0; t < trials / 4; ++t) {
      testing::Machine a(1000 + t, {}), b(5000 + t, {});
      aa_unchanged += testing::judge_unpaired(a.interleaved(1e5, 1e5, rounds), tol(0.02)).verdict ==
                      gate::Verdict::unchanged;
      slow_found +=
          testing::judge_unpaired(b.interleaved(1e5, 1.05e5, rounds), tol(0.02)).verdict ==
          gate::Verdict::regression;
    }
    CHECK(aa_unchanged <= trials / 4 / 5);
    CHECK(slow_found <= trials / 4 / 5);
  }
  TEST_CASE("measured one after the other, unpaired and naive rules raise false alarms") {
    int unpaired_alarms = 0, naive_alarms = 0;
    for (int t = 0; t < trials / 4; ++t) {
      testing::Machine m(9000 + t, {});
      auto s = m.sequential(1e5, 1e5, rounds);
      auto u = testing::judge_unpaired(s, tol(0.02)).verdict;
      unpaired_alarms += u == gate::Verdict::regression || u == gate::Verdict::improvement;
      naive_alarms += testing::judge_naive(s, 0.02) != gate::Verdict::unchanged;
    }
    CHECK(unpaired_alarms >= trials / 4 / 5);
    CHECK(naive_alarms >= trials / 4 / 2);
  }
}

TEST_SUITE("gate::paired stopping rule") {
  TEST_CASE("looks at fixed round counts; Bonferroni over them sets the first possible look") {
    CHECK(gate::look_schedule(128) == std::vector<int>{12, 16, 24, 32, 48, 64, 96, 128});
    CHECK(gate::look_schedule(100) == std::vector<int>{12, 16, 24, 32, 48, 64, 96, 100});
    CHECK(gate::look_schedule(20) == std::vector<int>{12, 16, 20});
    CHECK(gate::look_schedule(10) == std::vector<int>{10});
    auto c = gate::check_stop(rounds_of(std::vector<double>(11, 1.0)), 0.02);
    CHECK_FALSE(c.look);
    CHECK_FALSE(c.decided);
    CHECK(c.next_look == 12);
    CHECK(c.level == doctest::Approx(1 - 0.01 / 8));
    CHECK(std::isnan(c.ratio));
  }
  TEST_CASE("decides inside the band, beyond it, or at the limit; not while it straddles") {
    std::vector<double> flat, slow, noisy;
    stats::Rng rng(4);
    for (int i = 0; i < 12; ++i) {
      flat.push_back(std::exp(0.002 * rng.normal()));
      slow.push_back(1.2 * std::exp(0.002 * rng.normal()));
      noisy.push_back(std::exp(0.05 * rng.normal()));
    }
    auto in = gate::check_stop(rounds_of(flat), 0.02);
    CHECK(in.look);
    CHECK(in.decided);
    CHECK(in.reason.rfind("12 rounds: ", 0) == 0);
    CHECK(in.reason.find("% CI ") != std::string::npos);
    CHECK(in.reason.find(" inside +-2.0%") != std::string::npos);
    auto beyond = gate::check_stop(rounds_of(slow), 0.02);
    CHECK(beyond.decided);
    CHECK(beyond.ci_low > 1.02);
    CHECK(beyond.reason.find("beyond the 2.0% tolerance") != std::string::npos);
    auto open = gate::check_stop(rounds_of(noisy), 0.02);
    CHECK_FALSE(open.decided);
    CHECK(open.next_look == 16);
    CHECK(open.reason.find("next look at 16 rounds") != std::string::npos);
    gate::StopRule rule;
    rule.max_rounds = 12;
    auto limit = gate::check_stop(rounds_of(noisy), 0.02, rule);
    CHECK(limit.decided);
    CHECK(limit.next_look == 0);
    CHECK(limit.reason.find("still straddles +-2.0% at the 12-round limit") != std::string::npos);
  }
  TEST_CASE("repeated looks under drift: an A/A stops wrongly in under 1% of trials") {
    int wrong = 0, stopped_early = 0;
    const int n = 200;
    for (int t = 0; t < n; ++t) {
      testing::Machine m(20000 + t, {});
      auto s = m.interleaved(1e5, 1e5, 128);
      for (int r = 1; r <= 128; ++r) {
        auto c = gate::check_stop(std::span(s.rounds).first(r), 0.02);
        if (!c.decided) continue;
        wrong += c.ci_low > 1.02 || c.ci_high < 0.98;
        stopped_early += r < 128;
        break;
      }
    }
    CHECK(wrong == 0);
    CHECK(stopped_early >= 0.95 * n);  // and it does stop early: drift is paired away
  }
}
