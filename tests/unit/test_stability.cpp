// core/stability.h: which samples show the worker descheduled, and when a case is unstable,
// with the note every table and report prints.
#include <doctest/doctest.h>

#include "harness/core/stability.h"

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
    core::CaseResult r = two_threads(50, 19);
    r.metrics[core::kLoadMetric] = 4.125;
    r.metrics[core::kCoresMetric] = 2;
    core::Stability st = core::stability(r);
    CHECK(st.recorded == 50);
    CHECK(st.descheduled == 19);
    CHECK(st.unstable);
    CHECK(st.note == "unstable: descheduled in 38% of samples; load 4.1 on 2 cores");
    r.spec.measure.max_descheduled = 0.5;  // a scenario's own, more generous threshold
    st = core::stability(r);
    CHECK_FALSE(st.unstable);
    CHECK(st.note.empty());
  }

  TEST_CASE("at the threshold a case is stable; without the load it says only the share") {
    core::CaseResult r = two_threads(50, 5);  // 10%: not more than max_descheduled
    CHECK_FALSE(core::stability(r).unstable);
    r = two_threads(50, 6);
    CHECK(core::stability(r).note == "unstable: descheduled in 12% of samples");
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
