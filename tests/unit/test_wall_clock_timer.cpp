#include <doctest/doctest.h>

#include <chrono>
#include <vector>

#include "harness/measure/engine.h"
#include "harness/measure/wall_clock_timer.h"

using namespace attnprof;

TEST_SUITE("measure::wall_clock_timer") {
  TEST_CASE("prepares, then calls, once per sample, and stamps each sample") {
    std::vector<char> order;
    measure::WallClockTimer t([&] { order.push_back('c'); }, [&] { order.push_back('p'); });
    auto before = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    core::Sample a = t.sample();
    core::Sample b = t.sample();
    CHECK(order == std::vector<char>{'p', 'c', 'p', 'c'});
    CHECK(a.ns >= 0);
    CHECK(a.at_ns >= before);
    CHECK(b.at_ns >= a.at_ns);
    CHECK_FALSE(a.sm_clock_mhz.has_value());
  }
  TEST_CASE("drives the engine end to end on a real call") {
    volatile double sink = 0;
    measure::WallClockTimer t([&] {
      for (int i = 0; i < 1000; ++i) sink = sink + i * 0.5;
    });
    core::MeasureSettings s;
    s.warmup_ms = 1;
    s.min_samples = 10;
    s.max_samples = 50;
    s.time_budget_s = 5;
    auto r = measure::run(t, s);
    CHECK(r.samples.size() >= 10);
    CHECK(r.samples.size() <= 50);
    CHECK(r.summary.median_ns > 0);
    CHECK(r.dropped == 0);  // no clock on the CPU: nothing is ever dropped
  }
}
