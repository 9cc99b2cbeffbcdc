// costmatrix::classify: the roofline figures and the bound, including the article's 60% rule.
#include <doctest/doctest.h>

#include "harness/costmatrix/roofline.h"

using namespace attnprof;

TEST_SUITE("costmatrix::Roofline") {
  TEST_CASE("low arithmetic intensity is memory-bound") {
    // H100-like peaks: 989 TFLOP/s, 3350 GB/s, ridge ~295 FLOP/B. 1 GFLOP over 1 GB: 1 FLOP/B.
    const auto r = costmatrix::classify(
        {.flops = 1e9, .bytes = 1e9, .seconds = 1e-3, .peak_tflops = 989, .peak_gbps = 3350});
    CHECK(r.bound == "memory-bound");
    CHECK(r.achieved_gbps == doctest::Approx(1000));
    CHECK(r.achieved_tflops == doctest::Approx(1.0));
    CHECK(r.bandwidth_fraction == doctest::Approx(1000.0 / 3350));
    CHECK(r.ridge_intensity == doctest::Approx(989e12 / 3350e9));
    CHECK(r.reason == "1.0 FLOP/B below the ridge at 295.2 FLOP/B; 29.9% of peak bandwidth");
  }

  TEST_CASE("high arithmetic intensity is compute-bound") {
    const auto r = costmatrix::classify(
        {.flops = 5e11, .bytes = 1e9, .seconds = 1e-3, .peak_tflops = 989, .peak_gbps = 3350});
    CHECK(r.bound == "compute-bound");
    CHECK(r.compute_fraction == doctest::Approx(500.0 / 989));
  }

  TEST_CASE("device busy under 60% of wall is launch-bound, whatever the intensity") {
    costmatrix::RooflineInput in{.flops = 5e11,
                                 .bytes = 1e9,
                                 .seconds = 1e-3,
                                 .peak_tflops = 989,
                                 .peak_gbps = 3350,
                                 .busy_ns = 590,
                                 .wall_ns = 1000};
    auto r = costmatrix::classify(in);
    CHECK(r.bound == "launch-bound");
    CHECK(r.busy_fraction == doctest::Approx(0.59));
    CHECK(r.reason == "device busy 59.0% of wall time (< 60%)");
    in.busy_ns = 600;  // at the threshold the roofline decides
    CHECK(costmatrix::classify(in).bound == "compute-bound");
  }

  TEST_CASE("unknown peaks leave the bound empty and say why") {
    const auto r = costmatrix::classify({.flops = 1e9, .bytes = 1e9, .seconds = 1e-3});
    CHECK(r.bound.empty());
    CHECK(r.reason == "device peaks unknown");
    CHECK(r.achieved_gbps == doctest::Approx(1000));
    const auto m = costmatrix::metrics(r);
    CHECK(m.at("bandwidth.achieved_gbps") == doctest::Approx(1000));
    CHECK(m.count("bandwidth.fraction_of_peak") == 0);
    CHECK(m.at("intensity_flop_per_byte") == doctest::Approx(1));
    // The traced pass files them under "roofline."; none carries that prefix itself.
    for (const auto& [name, value] : m) CHECK(name.rfind("roofline.", 0) == std::string::npos);
  }

  TEST_CASE("from a trace: device busy time is the denominator, idle gaps make it launch-bound") {
    trace::Trace t;
    t.start_ns = 0;
    t.end_ns = 10'000;
    trace::DeviceEvent k;
    k.start_ns = 1'000;
    k.end_ns = 3'000;  // busy 2 us of a 10 us window
    t.device.push_back(k);
    const auto r = costmatrix::classify(t, 2e6, 2e6, 989, 3350);
    CHECK(r.seconds == doctest::Approx(2e-6));
    CHECK(r.achieved_gbps == doctest::Approx(1000));
    CHECK(r.bound == "launch-bound");
    CHECK(costmatrix::metrics(r).at("device.busy_fraction") == doctest::Approx(0.2));
    // A CPU trace has no device records: the wall window is the time.
    trace::Trace cpu;
    cpu.start_ns = 0;
    cpu.end_ns = 1'000'000;
    CHECK(costmatrix::classify(cpu, 1e9, 1e6, 1, 100).seconds == doctest::Approx(1e-3));
  }

  TEST_CASE("the bound label is a metric of its own") {
    CHECK(costmatrix::bound_metric("memory-bound") == "roofline.memory_bound");
    CHECK(costmatrix::bound_metric("launch-bound") == "roofline.launch_bound");
  }
}
