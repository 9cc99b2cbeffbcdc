// The CPU timer of worker/runner/timers.h. The GPU timer's decisions are tested without a GPU
// in tests/unit (test_device_time.cpp, test_device_timer.cpp); tests/device/test_timers.cpp runs
// it on a GPU.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "worker/runner/timers.h"

using namespace attnprof;

TEST_SUITE("runner::timers") {
  TEST_CASE("CPU cases: wall clock around the call, nothing to note") {
    core::Case c;
    c.hardware.device = "cpu";
    int calls = 0;
    auto timer = runner::make_timer(c, [&calls] {
      ++calls;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    });
    const core::Sample s = timer->sample();
    CHECK(calls == 1);
    CHECK(s.ns >= 2'000'000);
    CHECK(s.at_ns > 0);
    CHECK_FALSE(s.sm_clock_mhz.has_value());
    // What it saw of being descheduled (core/stability.h): a call that sleeps uses next to no
    // CPU time, and is switched out voluntarily, which the involuntary count leaves out.
    REQUIRE(s.cpu_ns.has_value());
    CHECK(*s.cpu_ns >= 0);
    CHECK(*s.cpu_ns < s.ns / 2);
    REQUIRE(s.invol_switches.has_value());
    CHECK(*s.invol_switches >= 0);
    CHECK(timer->metrics().empty());
    CHECK(timer->notes().empty());
  }
}
