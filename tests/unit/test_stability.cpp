// core/stability.h: which samples show the worker descheduled, and when a case is unstable,
// with the note every table and report prints.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>

#include "harness/core/stability.h"
#include "harness/measure/engine.h"

using namespace attnprof;

namespace {

core::Sample sample(std::int64_t ns, std::optional<std::int64_t> cpu,
                    std::optional<std::int64_t> invol) {
  core::Sample s;
  s.ns = ns;
  s.cpu_ns = cpu;
  s.invol_switches = invol;
  return s;
}

// A 2-thread case of `n` samples, `bad` of them descheduled (a switch and half the CPU time).
core::CaseResult two_threads(int n, int bad) {
  core::CaseResult r;
  r.spec.hardware.threads = 2;
  for (int i = 0; i < n; ++i)
    r.samples.push_back(i < bad ? sample(1'000'000, 1'000'000, 3)
                                : sample(1'000'000, 1'990'000, 0));
  std::vector<core::Sample> copy = r.samples;
  r.summary = measure::summarize(copy, r.spec.measure);  // the engine's, as the worker stores
  return r;
}

// `n` calls of 1.00 to 1.02 ms, evenly over the range in a shuffled order; every n/bad-th one
// descheduled (waited 200 us for a CPU) and `extra` ns slower for it. The summary is the
// engine's, as the worker stores it.
core::CaseResult spread(int n, int bad, std::int64_t extra) {
  core::CaseResult r;
  r.spec.hardware.threads = 1;
  for (int i = 0; i < n; ++i) {
    const int rank = (i * 37) % n;  // 37 is prime to n: a permutation of the ranks
    core::Sample s = sample(1'000'000 + rank * 20'000 / n, std::nullopt, std::nullopt);
    s.wait_ns = 0;
    if (bad > 0 && i % (n / bad) == 0) {
      s.ns += extra;
      s.wait_ns = 200'000;
    }
    r.samples.push_back(s);
  }
  std::vector<core::Sample> copy = r.samples;
  r.summary = measure::summarize(copy, r.spec.measure);
  return r;
}

}  // namespace

TEST_SUITE("core::stability") {
  TEST_CASE("with the run-queue wait recorded, a sample is descheduled by that wait alone") {
    // 2 threads asleep at a barrier half the call (PASSIVE), switched out 4 times, but waiting
    // for a CPU 20 us of 1 ms: a quiet machine, not a busy one.
    core::Sample quiet = sample(1'000'000, 1'000'000, 4);
    quiet.wait_ns = 20'000;
    CHECK_FALSE(core::descheduled(quiet, 2));
    // The same call, its threads kept from a CPU for 300 us in all: descheduled, whatever the
    // CPU time says.
    core::Sample busy = sample(1'000'000, 1'990'000, 0);
    busy.wait_ns = 300'000;
    CHECK(core::descheduled(busy, 2));
    // The line: more than a tenth of the call's wall time.
    core::Sample at = sample(1'000'000, std::nullopt, std::nullopt);
    at.wait_ns = 100'000;
    CHECK_FALSE(core::descheduled(at, 1));
    at.wait_ns = 100'001;
    CHECK(core::descheduled(at, 1));
    // A case whose samples carry only the wait counts them as recorded.
    core::CaseResult r;
    r.spec.hardware.threads = 2;
    for (int i = 0; i < 10; ++i) {
      core::Sample s = sample(1'000'000, std::nullopt, std::nullopt);
      s.wait_ns = i < 4 ? 500'000 : 0;
      r.samples.push_back(s);
    }
    const core::Stability st = core::stability(r);
    CHECK(st.recorded == 10);
    CHECK(st.descheduled == 4);
    CHECK(st.note == "unstable: descheduled in 40% of samples");
  }

  TEST_CASE(
      "without the wait, a sample is descheduled by an involuntary switch that cost CPU time") {
    // 2 threads over 1 ms: 2 ms of CPU is the whole capacity, 1.8 ms the line.
    CHECK(core::descheduled(sample(1'000'000, 1'000'000, 1), 2));
    CHECK_FALSE(core::descheduled(sample(1'000'000, 1'950'000, 4), 2));  // a switch, no cost
    CHECK_FALSE(core::descheduled(sample(1'000'000, 1'000'000, 0), 2));  // PASSIVE threads asleep
    CHECK(core::descheduled(sample(1'000'000, 899'000, 1), 1));
    CHECK_FALSE(core::descheduled(sample(1'000'000, 901'000, 1), 1));
    CHECK(core::descheduled(sample(1'000'000, 899'000, 1), 0));             // threads unknown: one
    CHECK_FALSE(core::descheduled(sample(1'000'000, std::nullopt, 5), 1));  // no record: a GPU
  }

  TEST_CASE("a case is unstable above its max_descheduled share, named with the machine's load") {
    core::CaseResult r = two_threads(50, 26);  // 52%: more than the default half
    r.metrics[core::kLoadMetric] = 4.125;
    r.metrics[core::kCoresMetric] = 2;
    core::Stability st = core::stability(r);
    CHECK(st.recorded == 50);
    CHECK(st.descheduled == 26);
    CHECK(st.unstable);
    CHECK(st.note ==
          "unstable: descheduled in 52% of samples (more than 50%); load 4.1 on 2 cores");
    r.spec.measure.max_descheduled = 0.6;  // a scenario's own, more generous threshold
    st = core::stability(r);
    CHECK_FALSE(st.unstable);
    CHECK(st.note.empty());
  }

  TEST_CASE("descheduled samples that moved the median beyond its interval make a case unstable") {
    // 200 calls of 1.00-1.02 ms; 40 of them (20%) waited for a CPU and took 1.3 ms. Without them
    // the median is ~1.01 ms; with them it is pushed up by a tenth of the ranks, far past an
    // interval of +-7 ranks.
    core::CaseResult r = spread(200, 40, 300'000);
    core::Stability st = core::stability(r);
    CHECK(st.descheduled == 40);
    REQUIRE(st.figures.shift);
    CHECK(*st.figures.shift > 1);
    CHECK(st.undisturbed_median_ns == doctest::Approx(1'010'000));
    CHECK(st.unstable);
    CHECK(st.note == fmt::format("unstable: descheduled in 20% of samples, which moved the median "
                                 "by {:.1f}x its interval",
                                 *st.figures.shift));
    // The worker stores both figures; a reader of the metrics alone decides the same.
    CHECK(core::unstable(st.figures, r.spec.measure));
  }

  TEST_CASE("descheduled samples that did not move the median leave a case stable") {
    // The same 20% descheduled, but their wait cost nothing measurable: they are spread over the
    // same 1.00-1.02 ms as the rest (interleaved ranks), so the median without them is within a
    // rank or two. The old share rule (more than 10%) called this unstable.
    core::CaseResult r = spread(200, 40, 0);
    core::Stability st = core::stability(r);
    CHECK(st.descheduled == 40);
    REQUIRE(st.figures.shift);
    CHECK(std::abs(*st.figures.shift) <= 1);
    CHECK_FALSE(st.unstable);
    CHECK(st.note.empty());
    // A few descheduled calls that each took 30% longer: slow, but too few to move the median
    // out of its interval.
    r = spread(200, 4, 300'000);
    st = core::stability(r);
    REQUIRE(st.figures.shift);
    CHECK(*st.figures.shift > 0);
    CHECK(*st.figures.shift <= 1);
    CHECK_FALSE(st.unstable);
  }

  TEST_CASE("a median interval of zero width that the undisturbed median leaves is unstable") {
    // 20 calls ran alone, half at 1 ms and half at 2 ms; 20 descheduled ones took 2 ms. All 40:
    // the median and its interval's lower end are 2 ms, an interval of zero width below the
    // median, which the undisturbed median (1.5 ms) leaves.
    core::CaseResult r;
    r.spec.hardware.threads = 1;
    for (int i = 0; i < 40; ++i) {
      core::Sample s = sample(i < 10 ? 1'000'000 : 2'000'000, std::nullopt, std::nullopt);
      s.wait_ns = i < 20 ? 0 : 1'000'000;
      r.samples.push_back(s);
    }
    std::vector<core::Sample> copy = r.samples;
    r.summary = measure::summarize(copy, r.spec.measure);
    REQUIRE(r.summary.ci_low_ns == r.summary.median_ns);
    const core::Stability st = core::stability(r);
    REQUIRE(st.figures.shift);
    CHECK(*st.figures.shift == core::kMaxShift);
    CHECK(st.note ==
          "unstable: descheduled in 50% of samples, which moved the median out of its "
          "interval");
  }

  TEST_CASE("runs read with their metrics only are judged by the stored share and shift") {
    core::CaseResult r;
    r.metrics[core::kDescheduledMetric] = 0.3;
    r.metrics[core::kDescheduledShiftMetric] = 0.4;  // did not move the median
    CHECK_FALSE(core::stability(r).unstable);
    r.metrics[core::kDescheduledShiftMetric] = -2.5;  // moved it, downwards
    CHECK(core::stability(r).note ==
          "unstable: descheduled in 30% of samples, which moved the median by 2.5x its interval");
    // Stored before the shift was recorded: the share rule it was stored under.
    r.metrics.erase(core::kDescheduledShiftMetric);
    CHECK(core::stability(r).note == "unstable: descheduled in 30% of samples");
    r.metrics[core::kDescheduledMetric] = 0.1;
    CHECK_FALSE(core::stability(r).unstable);
  }

  TEST_CASE("samples without the record (GPU, stored before v7) never make a case unstable") {
    core::CaseResult r;
    r.spec.hardware.threads = 1;
    for (int i = 0; i < 10; ++i) r.samples.push_back(sample(1000, std::nullopt, std::nullopt));
    const core::Stability st = core::stability(r);
    CHECK(st.recorded == 0);
    CHECK_FALSE(st.unstable);
  }
}
