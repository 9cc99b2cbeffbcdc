// measure::engine on scripted timers: how warm-up, sampling and the budgets end, and what the
// summary says.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "harness/measure/engine.h"
#include "harness/stats/rng.h"

using namespace attnprof;

namespace {

// Returns scripted durations and advances a scripted clock by each one (plus a fixed per-call
// overhead standing in for an L2 flush), so the engine's budgets run on script time.
class ScriptedTimer : public measure::Timer {
 public:
  explicit ScriptedTimer(std::function<core::Sample(int)> script) : m_script(std::move(script)) {}
  core::Sample sample() override {
    core::Sample s = m_script(calls++);
    now += s.ns + 1000;
    s.at_ns = 1'700'000'000'000'000'000 + now;
    return s;
  }
  measure::Options options() {
    measure::Options o;
    o.clock = [this] { return now; };
    return o;
  }
  std::int64_t now = 0;
  int calls = 0;

 private:
  std::function<core::Sample(int)> m_script;
};

core::Sample ns(double v) {
  core::Sample s;
  s.ns = static_cast<std::int64_t>(std::llround(v));
  return s;
}

core::MeasureSettings settings(double warmup_ms, int min_samples, int max_samples, double target,
                               double budget_s) {
  core::MeasureSettings s;
  s.warmup_ms = warmup_ms;
  s.min_samples = min_samples;
  s.max_samples = max_samples;
  s.target_rel_ci = target;
  s.time_budget_s = budget_s;
  return s;
}

}  // namespace

TEST_SUITE("measure::engine") {
  TEST_CASE("warm-up lasts until a drifting start has settled") {
    // 2 ms falling linearly to 1 ms over 400 calls (0.4 s: past warmup_ms), then 1 ms +-0.1%.
    stats::Rng rng(1);
    ScriptedTimer t([&](int i) {
      double base = i < 400 ? 2e6 - 1e6 * i / 400.0 : 1e6;
      return ns(base * (1 + 0.001 * rng.normal()));
    });
    auto r = measure::run(t, settings(200, 10, 2000, 0.005, 10), t.options());
    CHECK(r.stationary);
    CHECK(r.warmup_calls > 400);       // not before the drift ended
    CHECK(r.warmup_calls < 400 + 96);  // and soon after: two windows of 32 plus slack
    CHECK(r.warmup_rel_diff <= 0.005);
    CHECK(r.summary.median_ns == doctest::Approx(1e6).epsilon(0.002));
    CHECK(r.stop_reason == "ci target met");
    CHECK(r.summary.converged);
    CHECK(r.summary.n == 10);  // 0.1% noise meets a 0.5% target at the minimum count
  }
  TEST_CASE("sampling_starts is called once, between the warm-up and the first sample") {
    ScriptedTimer t([](int) { return ns(1e6); });
    measure::Options o = t.options();
    std::vector<int> at;  // the timer's calls so far, each time it is called
    o.sampling_starts = [&] { at.push_back(t.calls); };
    auto r = measure::run(t, settings(10, 10, 50, 0.005, 10), o);
    REQUIRE(at.size() == 1);
    CHECK(at[0] == r.warmup_calls);
    CHECK(t.calls == r.warmup_calls + static_cast<int>(r.samples.size()));
  }
  TEST_CASE("a timing that never settles ends warm-up at the cap, and says so") {
    ScriptedTimer t([](int i) { return ns(1e6 + 5e3 * i); });  // keeps slowing down
    auto r = measure::run(t, settings(10, 10, 50, 0.005, 10), t.options());
    CHECK_FALSE(r.stationary);
    // Cap: min(2 s, budget / 2) of script time, at about 1 ms + 5 us * i per call.
    CHECK(r.warmup_calls > 500);
    CHECK(r.warmup_calls < 1000);
  }
  TEST_CASE("noisy timings: sample count grows until the CI of the median is narrow") {
    // Lognormal, 5% spread: the 95% CI of the median reaches +-0.5% at a few hundred samples.
    stats::Rng rng(2);
    ScriptedTimer t([&](int) { return ns(1e5 * std::exp(0.05 * rng.normal())); });
    auto r = measure::run(t, settings(0, 10, 5000, 0.005, 100), t.options());
    CHECK(r.stop_reason == "ci target met");
    CHECK(r.summary.converged);
    CHECK(r.summary.n > 300);
    CHECK(r.summary.n < 1500);
    double half = std::max(r.summary.median_ns - r.summary.ci_low_ns,
                           r.summary.ci_high_ns - r.summary.median_ns);
    CHECK(half / r.summary.median_ns <= 0.005);
    CHECK(r.summary.median_ns == doctest::Approx(1e5).epsilon(0.01));
  }
  TEST_CASE("max samples ends a noisy run before convergence") {
    stats::Rng rng(3);
    ScriptedTimer t([&](int) { return ns(1e5 * std::exp(0.05 * rng.normal())); });
    auto r = measure::run(t, settings(0, 10, 120, 0.005, 100), t.options());
    CHECK(r.stop_reason == "max samples");
    CHECK(r.samples.size() == 120);
    CHECK_FALSE(r.summary.converged);
  }
  TEST_CASE("the time budget ends the run, warm-up included") {
    stats::Rng rng(4);
    ScriptedTimer t([&](int) { return ns(1e6 * std::exp(0.05 * rng.normal())); });
    // 0.2 s budget at ~1 ms per call: ~100 calls in warm-up (half the budget), ~100 after.
    auto r = measure::run(t, settings(50, 10, 100000, 0.0001, 0.2), t.options());
    CHECK(r.stop_reason == "time budget");
    CHECK_FALSE(r.summary.converged);
    CHECK(t.now >= 200'000'000);
    CHECK(t.now < 203'000'000);  // stops within a call of the budget
    CHECK(r.samples.size() > 50);
  }
  TEST_CASE("constant timings stop at exactly min_samples") {
    ScriptedTimer t([](int) { return ns(5e4); });
    auto r = measure::run(t, settings(0, 30, 2000, 0.005, 10), t.options());
    CHECK(r.samples.size() == 30);
    CHECK(r.stop_reason == "ci target met");
    CHECK(r.summary.median_ns == 5e4);
  }
  TEST_CASE("throttled samples are marked dropped, counted and kept; the summary skips them") {
    // Every 10th call runs at 1500 MHz instead of 1980 and takes 1.3x as long.
    ScriptedTimer t([](int i) {
      core::Sample s = ns(i % 10 == 9 ? 1.3e5 : 1e5 + (i % 7));
      s.sm_clock_mhz = i % 10 == 9 ? 1500.0 : 1980.0;
      return s;
    });
    auto r = measure::run(t, settings(0, 100, 100, 0.5, 10), t.options());
    REQUIRE(r.samples.size() == 100);
    CHECK(r.dropped == 10);
    int marked = 0;
    for (const auto& s : r.samples) {
      CHECK(s.dropped == (*s.sm_clock_mhz < 1600));
      marked += s.dropped;
    }
    CHECK(marked == 10);
    CHECK(r.summary.n == 90);
    CHECK(r.summary.max_ns < 1.1e5);
  }
  TEST_CASE("a 2% clock dip is not a throttle; a 4% one is") {
    std::vector<core::Sample> v(10);
    for (int i = 0; i < 10; ++i) v[i].sm_clock_mhz = 1980.0;
    v[3].sm_clock_mhz = 1980.0 * 0.98;
    v[7].sm_clock_mhz = 1980.0 * 0.96;
    v.push_back({});  // no clock: never dropped
    CHECK(measure::mark_throttled(v, 0.97) == 1);
    CHECK_FALSE(v[3].dropped);
    CHECK(v[7].dropped);
    CHECK_FALSE(v.back().dropped);
  }
  TEST_CASE("even a mostly throttled run keeps at least half its samples") {
    // 45% of calls at a low clock: relative to the run's median they are the outliers.
    ScriptedTimer t([](int i) {
      core::Sample s = ns(1e5);
      s.sm_clock_mhz = i % 20 < 9 ? 1200.0 : 1980.0;
      return s;
    });
    auto r = measure::run(t, settings(0, 200, 200, 0.5, 10), t.options());
    CHECK(r.dropped == 90);
    CHECK(r.summary.n == 110);
  }
  TEST_CASE("a batch takes at least its fewest calls, whatever the time, and at most its most") {
    ScriptedTimer t([](int) { return ns(1e6); });
    // No time asked for: the fewest calls alone decide (attnprof ab's rounds need several calls
    // for a batch's lower quartile to mean something, also where one call is long).
    CHECK(measure::sample_batch(t, 0, 8, 100000).size() == 8);
    CHECK(measure::sample_batch(t, 0, 0, 100000).size() == 1);  // never an empty batch
    CHECK(measure::sample_batch(t, 0, 8, 3).size() == 3);       // the most wins
    // A whole second asked for: the most calls end it first.
    CHECK(measure::sample_batch(t, 1e9, 1, 5).size() == 5);
  }

  TEST_CASE("every sample carries a timestamp, in order") {
    ScriptedTimer t([](int) { return ns(1e5); });
    auto r = measure::run(t, settings(1, 20, 20, 0.5, 10), t.options());
    REQUIRE(r.samples.size() == 20);
    for (std::size_t i = 1; i < r.samples.size(); ++i)
      CHECK(r.samples[i].at_ns > r.samples[i - 1].at_ns);
    CHECK(r.warmup_calls >= 10);  // 1 ms of 0.1 ms calls
  }
}
