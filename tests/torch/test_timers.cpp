// The CPU timer of worker/runner/timers.h. The GPU timer's decisions are tested without a GPU
// in tests/unit (test_device_time.cpp, test_device_timer.cpp); tests/device/test_timers.cpp runs
// it on a GPU.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "worker/runner/timers.h"

using namespace attnprof;

namespace {

// The process's CPU time and involuntary context switches, read as the timer reads them: a
// sample's figures must lie within two readings taken around it.
struct Process {
  std::int64_t cpu_ns = 0, invol = 0;
};

Process process_now() {
  Process p;
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  p.cpu_ns = std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  p.invol = ru.ru_nivcsw;
  return p;
}

}  // namespace

TEST_SUITE("runner::timers") {
  TEST_CASE("CPU cases: wall clock around the call, nothing to note") {
    core::Case c;
    c.hardware.device = "cpu";
    int calls = 0;
    auto timer = runner::make_timer(c, [&calls] {
      ++calls;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    });
    const Process before = process_now();
    const core::Sample s = timer->sample();
    const Process after = process_now();
    CHECK(calls == 1);
    CHECK(s.ns >= 2'000'000);
    CHECK(s.at_ns > 0);
    CHECK_FALSE(s.sm_clock_mhz.has_value());
    // What it saw of being descheduled (core/stability.h): the process's CPU time and
    // involuntary switches over the call, so within what this test read around it. A call that
    // sleeps uses next to no CPU time.
    REQUIRE(s.cpu_ns.has_value());
    CHECK(*s.cpu_ns >= 0);
    CHECK(*s.cpu_ns <= after.cpu_ns - before.cpu_ns);
    CHECK(*s.cpu_ns < s.ns / 2);
    REQUIRE(s.invol_switches.has_value());
    CHECK(*s.invol_switches >= 0);
    CHECK(*s.invol_switches <= after.invol - before.invol);
    CHECK(timer->metrics().empty());
    CHECK(timer->notes().empty());
  }

  TEST_CASE("CPU cases: a call that computes is charged the CPU time it used") {
    core::Case c;
    c.hardware.device = "cpu";
    // Spins until the process has used 5 ms more CPU time: what the call used, however long
    // that takes on a busy machine.
    std::int64_t spent = 0;
    auto timer = runner::make_timer(c, [&spent] {
      const std::int64_t start = process_now().cpu_ns;
      while ((spent = process_now().cpu_ns - start) < 5'000'000) {
      }
    });
    const Process before = process_now();
    const core::Sample s = timer->sample();
    const Process after = process_now();
    REQUIRE(s.cpu_ns.has_value());
    CHECK(*s.cpu_ns >= spent);
    CHECK(*s.cpu_ns <= after.cpu_ns - before.cpu_ns);
  }
}
