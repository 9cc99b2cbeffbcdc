// gate::compare, check_baseline and timing_mode: the verdict each kind of change gets,
// baselines of several runs, and cases timed differently.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "harness/core/stability.h"
#include "harness/gate/compare.h"
#include "harness/gate/timing_mode.h"
#include "harness/measure/engine.h"
#include "harness/stats/rng.h"
#include "harness/stats/summary.h"
#include "harness/util/error.h"

using namespace attnprof;

namespace {

std::vector<double> lognormal(stats::Rng& rng, int n, double median, double sigma) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(std::round(median * std::exp(sigma * rng.normal())));
  return v;
}

core::CaseResult result(const std::string& key, const std::vector<double>& ns) {
  core::CaseResult cr;
  cr.spec.key = key;
  for (double v : ns) {
    core::Sample s;
    s.ns = static_cast<std::int64_t>(v);
    cr.samples.push_back(s);
  }
  return cr;
}

gate::BaselineCase base_case(const std::vector<double>& ns) {
  gate::BaselineCase b;
  core::Summary s = stats::summarize(ns);
  b.median_ns = s.median_ns;
  b.q1_ns = s.q1_ns;
  b.q3_ns = s.q3_ns;
  b.ci_low_ns = s.ci_low_ns;
  b.ci_high_ns = s.ci_high_ns;
  b.n = s.n;
  b.samples_ns = ns;
  std::sort(b.samples_ns.begin(), b.samples_ns.end());
  return b;
}

// One case, baseline median 100 us, candidate `factor` times slower, `n` samples per side.
gate::CaseVerdict one(double factor, int n, double sigma, gate::Options o = {},
                      std::uint64_t seed = 1) {
  stats::Rng rng(seed);
  gate::Baseline b;
  b.cases["k"] = base_case(lognormal(rng, n, 1e5, sigma));
  core::Run run;
  run.cases.push_back(result("k", lognormal(rng, n, 1e5 * factor, sigma)));
  auto v = gate::compare(b, run, o);
  REQUIRE(v.size() == 1);
  return v[0];
}

}  // namespace

TEST_SUITE("gate::compare") {
  TEST_CASE("a 10% slowdown beyond a 5% tolerance is a regression and fails the gate") {
    auto v = one(1.10, 200, 0.02);
    CHECK(v.verdict == gate::Verdict::regression);
    CHECK(v.method == "bootstrap");
    CHECK(v.ratio == doctest::Approx(1.10).epsilon(0.01));
    CHECK(v.ci_low > 1.05);
    CHECK(v.ci_high < 1.15);
    CHECK(v.p_adjusted < 1e-10);
    CHECK(v.tolerance == 0.05);
    INFO(v.reason);
    CHECK(v.reason == fmt::format("{:.3f}x (99% CI {:.3f}-{:.3f}, bootstrap n=200/200): slower "
                                  "beyond the 5.0% tolerance; adjusted p 6e-67; run-to-run "
                                  "noise unknown: the baseline records one run (`attnprof "
                                  "baseline update --runs 3` records the spread)",
                                  v.ratio, v.ci_low, v.ci_high));
    CHECK(gate::exit_code({v}) == util::exit_gate_failed);
  }
  TEST_CASE("a 10% speed-up is an improvement and passes") {
    auto v = one(0.90, 200, 0.02);
    CHECK(v.verdict == gate::Verdict::improvement);
    CHECK(gate::exit_code({v}) == util::exit_pass);
  }
  TEST_CASE("the same distribution is unchanged") {
    auto v = one(1.0, 200, 0.02);
    CHECK(v.verdict == gate::Verdict::unchanged);
    CHECK(v.ci_low >= 0.95);
    CHECK(v.ci_high <= 1.05);
    CHECK(gate::exit_code({v}) == util::exit_pass);
  }
  TEST_CASE("a small change within tolerance is unchanged even when significant") {
    auto v = one(1.02, 500, 0.01);
    CHECK(v.p_adjusted < 1e-6);                    // clearly slower...
    CHECK(v.verdict == gate::Verdict::unchanged);  // ...but within the 5% the case allows
  }
  TEST_CASE("too few noisy samples: inconclusive, a warning unless strict") {
    auto v = one(1.08, 8, 0.10);
    CHECK(v.verdict == gate::Verdict::inconclusive);
    CHECK(v.reason.find("straddles the +-5.0% tolerance; more samples would tell; run-to-run "
                        "noise unknown") != std::string::npos);
    CHECK(gate::exit_code({v}) == util::exit_pass);
    gate::Options strict;
    strict.strict = true;
    CHECK(gate::exit_code({v}, strict) == util::exit_gate_failed);
  }
  TEST_CASE("per-case tolerance, and an override for all cases") {
    stats::Rng rng(4);
    gate::Baseline b;
    b.cases["k"] = base_case(lognormal(rng, 200, 1e5, 0.02));
    core::Run run;
    run.cases.push_back(result("k", lognormal(rng, 200, 1.1e5, 0.02)));
    run.cases[0].spec.gate.tolerance = 0.2;
    CHECK(gate::compare(b, run)[0].verdict == gate::Verdict::unchanged);
    gate::Options o;
    o.tolerance = 0.03;
    auto v = gate::compare(b, run, o)[0];
    CHECK(v.verdict == gate::Verdict::regression);
    CHECK(v.tolerance == 0.03);
  }
  TEST_CASE("beyond tolerance but not significant after adjustment: inconclusive") {
    gate::Options o;
    o.tolerance = 0.0;
    o.alpha = 1e-30;
    auto v = one(1.03, 60, 0.02, o);
    CHECK(v.ci_low > 1.0);
    CHECK(v.verdict == gate::Verdict::inconclusive);
    CHECK(v.reason.find("not significant") != std::string::npos);
  }
  TEST_CASE("Benjamini-Hochberg runs across the cases of one comparison") {
    stats::Rng rng(5);
    gate::Baseline b;
    core::Run run;
    for (int i = 0; i < 10; ++i) {
      std::string key = "k" + std::to_string(i);
      b.cases[key] = base_case(lognormal(rng, 50, 1e5, 0.02));
      run.cases.push_back(result(key, lognormal(rng, 50, 1e5 * (i == 0 ? 1.1 : 1.0), 0.02)));
    }
    auto v = gate::compare(b, run);
    REQUIRE(v.size() == 10);
    for (const auto& x : v) CHECK(x.p_adjusted >= x.p_value);
    CHECK(v[0].p_adjusted == doctest::Approx(v[0].p_value * 10));  // the smallest p: x N / 1
    CHECK(v[0].verdict == gate::Verdict::regression);
  }
  TEST_CASE("new, missing (also via skip), failed, and lookup through aliases") {
    stats::Rng rng(6);
    auto ns = lognormal(rng, 50, 1e5, 0.01);
    gate::Baseline b;
    b.cases["renamed-from"] = base_case(ns);
    b.cases["gone"] = base_case(ns);
    b.cases["skipped"] = base_case(ns);
    b.cases["broken"] = base_case(ns);
    core::Run run;
    run.cases.push_back(result("renamed-to", ns));
    run.cases.back().spec.aliases = {"renamed-from"};
    run.cases.push_back(result("brand-new", ns));
    run.cases.push_back(result("skipped", {}));
    run.cases.back().status = core::CaseStatus::skipped;
    run.cases.back().message = "needs a GPU";
    run.cases.push_back(result("broken", ns));
    run.cases.back().status = core::CaseStatus::failed;
    run.cases.back().message = "max abs error 0.3 > 0.01";
    auto v = gate::compare(b, run);
    REQUIRE(v.size() == 5);
    CHECK(v[0].key == "renamed-to");
    CHECK(v[0].baseline_key == "renamed-from");
    CHECK(v[0].verdict == gate::Verdict::unchanged);
    CHECK(v[1].verdict == gate::Verdict::new_case);
    CHECK(v[2].verdict == gate::Verdict::missing);
    CHECK(v[2].reason == "in the baseline but skipped: needs a GPU");
    CHECK(v[3].verdict == gate::Verdict::failed);
    CHECK(v[3].reason == "failed: max abs error 0.3 > 0.01");
    CHECK(v[4].key == "gone");
    CHECK(v[4].verdict == gate::Verdict::missing);
    CHECK(gate::exit_code(v) == util::exit_gate_failed);
    v.erase(v.begin() + 3);  // without the failed case, only missing ones fail the gate
    CHECK(gate::exit_code(v) == util::exit_gate_failed);
    gate::Options lenient;
    lenient.missing_fails = false;
    CHECK(gate::exit_code(v, lenient) == util::exit_pass);
    CHECK(std::string(gate::to_string(v[1].verdict)) == "new");
  }
  TEST_CASE("a baseline without samples: conservative interval from its summary, no test") {
    stats::Rng rng(7);
    gate::Baseline b;
    b.cases["k"] = base_case(lognormal(rng, 200, 1e5, 0.02));
    b.cases["k"].samples_ns.clear();
    core::Run run;
    run.cases.push_back(result("k", lognormal(rng, 200, 1.2e5, 0.02)));
    auto v = gate::compare(b, run)[0];
    CHECK(v.method == "summary");
    CHECK(std::isnan(v.p_value));
    CHECK(v.verdict == gate::Verdict::regression);
    CHECK(v.ci_low < 1.19);
    // Only a median and nothing about spread: not comparable.
    b.cases["k"].ci_low_ns = b.cases["k"].ci_high_ns = b.cases["k"].q1_ns = 0;
    auto w = gate::compare(b, run)[0];
    CHECK(w.verdict == gate::Verdict::inconclusive);
    CHECK(w.reason.rfind("no spread recorded", 0) == 0);
  }
  TEST_CASE("a baseline from another environment is never compared") {
    stats::Rng rng(8);
    gate::Baseline b;
    b.fingerprint = "0000000000000000";
    b.cases["k"] = base_case(lognormal(rng, 100, 1e5, 0.02));
    core::Run run;
    run.env.fields = {{"device.name", "other"}};
    run.cases.push_back(result("k", lognormal(rng, 100, 1.5e5, 0.02)));
    auto v = gate::compare(b, run)[0];
    CHECK(v.verdict == gate::Verdict::inconclusive);
    CHECK(v.reason.rfind("would be regression", 0) == 0);
    gate::Options o;
    o.allow_fingerprint_mismatch = true;
    CHECK(gate::compare(b, run, o)[0].verdict == gate::Verdict::regression);
  }
  TEST_CASE("Hodges-Lehmann effect agrees with the median ratio on a clean shift") {
    gate::Options o;
    o.effect = gate::Effect::hodges_lehmann;
    auto v = one(1.10, 200, 0.02, o);
    CHECK(v.method == "hodges-lehmann");
    CHECK(v.ratio == doctest::Approx(1.10).epsilon(0.01));
    CHECK(v.verdict == gate::Verdict::regression);
  }
  TEST_CASE("dropped samples are not compared") {
    stats::Rng rng(9);
    auto ns = lognormal(rng, 100, 1e5, 0.01);
    gate::Baseline b;
    b.cases["k"] = base_case(ns);
    core::Run run;
    run.cases.push_back(result("k", ns));
    for (int i = 0; i < 40; ++i) {  // throttled: 30% slower, but marked dropped
      core::Sample s;
      s.ns = 130000;
      s.dropped = true;
      run.cases[0].samples.push_back(s);
    }
    auto v = gate::compare(b, run)[0];
    CHECK(v.candidate_n == 100);
    CHECK(v.verdict == gate::Verdict::unchanged);
  }
  TEST_CASE("pinned: a fixed input gives the same ratio and interval on every platform") {
    // Literal samples (no libm in the input) and literal results: the bootstrap's generator,
    // its resample count and the quantile rule are all in these figures, so a change to any of
    // them moves stored verdicts and is seen here. Integers in ns, as the store keeps them.
    std::vector<double> base, cand;
    for (int i = 0; i < 40; ++i) {
      base.push_back(100000 + (i * 37) % 41 * 250);
      cand.push_back(104000 + (i * 29) % 43 * 260);
    }
    gate::Baseline b;
    b.cases["k"] = base_case(base);
    core::Run run;
    run.cases.push_back(result("k", cand));
    const auto v = gate::compare(b, run)[0];
    CHECK(v.ratio == doctest::Approx(1.04).epsilon(1e-12));
    CHECK(v.ci_low == doctest::Approx(1.0118256772673735).epsilon(1e-12));
    CHECK(v.ci_high == doctest::Approx(1.0685785979295888).epsilon(1e-12));
    CHECK(v.verdict == gate::Verdict::inconclusive);  // the interval straddles the 5% default
    const auto again = gate::compare(b, run)[0];
    CHECK(again.ci_low == v.ci_low);
    CHECK(again.ci_high == v.ci_high);
  }
}

namespace {
core::CaseResult timed(const std::string& key, const std::vector<double>& ns, double graph_batch,
                       double cupti_fraction) {
  core::CaseResult cr = result(key, ns);
  cr.spec.hardware.device = "cuda";
  cr.metrics["measure.graph_batch"] = graph_batch;
  cr.metrics["measure.cupti_fraction"] = cupti_fraction;
  return cr;
}
}  // namespace

TEST_SUITE("gate::timing_mode") {
  TEST_CASE("derived from the device and the timer's metrics") {
    CHECK(gate::timing_mode(result("k", {1})) == "cpu.wall");
    CHECK(gate::timing_mode(timed("k", {1}, 0, 1)) == "cuda.cold.cupti");
    CHECK(gate::timing_mode(timed("k", {1}, 32, 1)) == "cuda.graph.cupti");
    CHECK(gate::timing_mode(timed("k", {1}, 0, 0)) == "cuda.cold.events");
    CHECK(gate::timing_mode(timed("k", {1}, 16, 0.7)) == "cuda.graph.mixed");
    core::CaseResult bare = result("k", {1});
    bare.spec.hardware.device = "cuda:1";
    CHECK(gate::timing_mode(bare) == "");  // no metrics: unknown
    CHECK(gate::describe_timing_mode("cuda.graph.events") == "CUDA-graph batches, CUDA event time");
    CHECK(gate::describe_timing_mode("cpu.wall") == "CPU wall clock");
  }
  TEST_CASE("a case timed differently than in its baseline is inconclusive, never a regression") {
    stats::Rng rng(12);
    gate::Baseline b;
    b.cases["k"] = base_case(lognormal(rng, 100, 1e5, 0.01));
    b.cases["k"].timing = "cuda.cold.cupti";
    core::Run run;
    run.cases.push_back(timed("k", lognormal(rng, 100, 0.5e5, 0.01), 32, 1));  // 2x "faster"
    auto v = gate::compare(b, run)[0];
    CHECK(v.verdict == gate::Verdict::inconclusive);
    CHECK(v.method.empty());
    CHECK(v.reason ==
          "timed as cuda.graph.cupti (CUDA-graph batches, CUPTI kernel time) here but "
          "cuda.cold.cupti (single cold calls, CUPTI kernel time) in the baseline: not the same "
          "quantity, not compared; update the baseline if the change of timing is intended");
    // The same mode, or a baseline that does not record one: compared as usual.
    run.cases[0].metrics["measure.graph_batch"] = 0;
    CHECK(gate::compare(b, run)[0].verdict == gate::Verdict::improvement);
    b.cases["k"].timing.clear();
    run.cases[0].metrics["measure.graph_batch"] = 32;
    CHECK(gate::compare(b, run)[0].verdict == gate::Verdict::improvement);
  }
}

TEST_SUITE("gate::compare baselines of several runs") {
  // A baseline file whose case medians moved by about 10% between its runs.
  gate::Baseline spread_baseline(stats::Rng & rng) {
    gate::Baseline b;
    b.cases["k"] = base_case(lognormal(rng, 200, 1e5, 0.01));
    b.cases["k"].run_medians_ns = {0.93e5, 1e5, 1.08e5, 0.97e5, 1.04e5};
    return b;
  }
  TEST_CASE("the interval includes the run-to-run spread: a 6% move is not a regression") {
    stats::Rng rng(21);
    gate::Baseline b = spread_baseline(rng);
    core::Run run;
    run.cases.push_back(result("k", lognormal(rng, 200, 1.06e5, 0.01)));
    auto v = gate::compare(b, run)[0];
    CHECK(v.method == "runs");
    CHECK(v.baseline_n == 5);
    CHECK(v.verdict == gate::Verdict::inconclusive);
    CHECK(v.ci_low < 1.05);
    INFO(v.reason);
    CHECK(v.reason.find("baseline of 5 runs, n=200") != std::string::npos);
    // The within-run interval is narrow; more samples would not help, and the reason says so.
    CHECK(v.reason.find("straddles the +-5.0% tolerance; the run-to-run spread (6.0% over 5 runs) "
                        "is what is wide, so more samples would not tell; measure base and head "
                        "side by side (attnprof ab)") != std::string::npos);
    // Judged against the samples of one run alone, the same move reads as a regression.
    b.cases["k"].run_medians_ns.clear();
    CHECK(gate::compare(b, run)[0].verdict == gate::Verdict::regression);
  }
  TEST_CASE("history mode names the run-to-run spread only when it is what is wide") {
    stats::Rng rng(22);
    gate::Baseline b = spread_baseline(rng);
    b.history = true;
    core::Run run;
    run.cases.push_back(result("k", lognormal(rng, 200, 1.06e5, 0.01)));
    auto v = gate::compare(b, run)[0];
    CHECK(v.method == "history");
    CHECK(v.reason.find("history of 5 runs, n=200") != std::string::npos);
    CHECK(v.reason.find("the run-to-run spread (6.0% over 5 runs) is what is wide") !=
          std::string::npos);
    // Runs that agree to 0.1% and a run with 12 noisy samples: its own interval is what is wide.
    b.cases["k"].run_medians_ns = {0.999e5, 1e5, 1.001e5, 1e5, 1e5};
    core::Run noisy;
    noisy.cases.push_back(result("k", lognormal(rng, 12, 1.04e5, 0.08)));
    auto w = gate::compare(b, noisy)[0];
    INFO(w.reason);
    CHECK(w.verdict == gate::Verdict::inconclusive);
    CHECK(w.reason.find("; more samples would tell") != std::string::npos);
    CHECK(w.reason.find("run-to-run spread") == std::string::npos);
  }
}

TEST_SUITE("gate::check_baseline") {
  TEST_CASE("another environment: not comparable, both fingerprints named") {
    stats::Rng rng(8);
    gate::Baseline b;
    b.path = "baselines/h100.yaml";
    b.fingerprint = "0000000000000000";
    b.cases["k"] = base_case(lognormal(rng, 100, 1e5, 0.02));
    core::Run run;
    run.env.fields = {{"device.name", "other"}};
    run.cases.push_back(result("k", lognormal(rng, 100, 1e5, 0.02)));
    auto check = gate::check_baseline(b, run, gate::compare(b, run));
    CHECK_FALSE(check.comparable);
    CHECK(check.warning ==
          "no comparable baseline: baselines/h100.yaml is from environment 0000000000000000, "
          "this run is from environment " +
              run.env.fingerprint() +
              "; nothing was compared (write a baseline on this machine, or compare against its "
              "history)");
    b.fingerprint = run.env.fingerprint();
    auto ok = gate::check_baseline(b, run, gate::compare(b, run));
    CHECK(ok.comparable);
    CHECK(ok.warning.empty());
  }
  TEST_CASE("no case of the run in the baseline (empty history): not comparable, says why") {
    gate::Baseline b;
    b.path = "history of main";
    core::Run run;
    run.env.fields = {{"device.name", "cpu"}};
    b.fingerprint = run.env.fingerprint();
    b.notes["k"] = "0 earlier run(s) of this case on main in this environment; 5 needed";
    run.cases.push_back(result("k", {1, 2, 3, 4, 5, 6}));
    auto check = gate::check_baseline(b, run, gate::compare(b, run));
    CHECK_FALSE(check.comparable);
    CHECK(check.warning ==
          "no comparable baseline: none of this run's 1 completed case(s) has an entry in "
          "history of main (0 earlier run(s) of this case on main in this environment; 5 "
          "needed); nothing was compared");
  }
  TEST_CASE("a baseline without a fingerprint is compared, with a warning") {
    gate::Baseline b;
    b.path = "b.yaml";
    b.cases["k"] = base_case({1, 2, 3, 4, 5, 6});
    core::Run run;
    run.env.fields = {{"device.name", "cpu"}};
    run.cases.push_back(result("k", {1, 2, 3, 4, 5, 6}));
    auto check = gate::check_baseline(b, run, gate::compare(b, run));
    CHECK(check.comparable);
    CHECK(check.warning.rfind("b.yaml records no environment fingerprint", 0) == 0);
  }

  TEST_CASE("an unstable case is inconclusive: what it would be, and why not, its interval kept") {
    stats::Rng rng(7);
    gate::Baseline b;
    b.cases["k"] = base_case(lognormal(rng, 200, 1e5, 0.01));
    core::Run run;
    // 20% slower, 40 of 200 samples descheduled on one thread and 30% slower for it, which
    // moved the median beyond its interval: unstable.
    run.cases.push_back(result("k", lognormal(rng, 200, 1.2e5, 0.01)));
    run.cases[0].spec.hardware.threads = 1;
    for (std::size_t i = 0; i < run.cases[0].samples.size(); ++i) {
      core::Sample& sm = run.cases[0].samples[i];
      sm.cpu_ns = i < 40 ? sm.ns / 2 : sm.ns;
      sm.invol_switches = i < 40 ? 2 : 0;
      if (i < 40) sm.ns = sm.ns * 13 / 10;
    }
    std::vector<core::Sample> copy = run.cases[0].samples;
    run.cases[0].summary = measure::summarize(copy, run.cases[0].spec.measure);
    const core::Stability st = core::stability(run.cases[0]);
    REQUIRE(st.figures.shift);
    const std::string note = fmt::format(
        "unstable: descheduled in 20% of samples, which moved the median by {:.1f}x its interval; "
        "load 4.1 on 2 cores",
        *st.figures.shift);
    run.cases[0].metrics[core::kLoadMetric] = 4.1;
    run.cases[0].metrics[core::kCoresMetric] = 2;
    auto v = gate::compare(b, run);
    REQUIRE(v.size() == 1);
    CHECK(v[0].verdict == gate::Verdict::inconclusive);
    CHECK(v[0].unstable == note);
    CHECK(v[0].reason.rfind("would be regression (1.", 0) == 0);
    CHECK(v[0].reason.ends_with("), but " + note +
                                ": samples from two machine states, not one figure to judge"));
    CHECK(v[0].ci_low > 1.15);  // the interval stays for the record
    // Stable (a generous limit on the move): the regression it is.
    run.cases[0].spec.measure.max_descheduled_shift = *st.figures.shift + 1;
    v = gate::compare(b, run);
    CHECK(v[0].verdict == gate::Verdict::regression);
    CHECK(v[0].unstable.empty());
  }
}
