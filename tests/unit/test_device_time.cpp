// The GPU timer's arithmetic and choice of duration (harness/measure/device_time.h): graph
// batching threshold and size, CUPTI batch size, busy time and span of a call's records, which
// duration a sample reports and the notes each fallback leaves. No GPU needed.
#include <doctest/doctest.h>

#include "harness/measure/device_time.h"

using namespace attnprof;
using measure::DurationPicker;

TEST_SUITE("measure::device_time") {
  TEST_CASE("graph batching is for calls under 20 us, with replays of about 128 us") {
    CHECK(measure::use_graph_batch(19'999));
    CHECK_FALSE(measure::use_graph_batch(20'000));
    CHECK_FALSE(measure::use_graph_batch(0));  // a probe that measured nothing decides nothing
    CHECK(measure::graph_batch_size(10'000) == 16);  // 13 calls would do; at least 16
    CHECK(measure::graph_batch_size(4'000) == 32);
    CHECK(measure::graph_batch_size(3'000) == 43);
    CHECK(measure::graph_batch_size(1'000) == 64);  // capped
    CHECK(measure::graph_batch_size(0) == 64);
  }

  TEST_CASE("a CUPTI session covers about 20 ms of samples, 1 to 32") {
    CHECK(measure::cupti_batch_size(100e3) == 32);
    CHECK(measure::cupti_batch_size(1e6) == 20);
    CHECK(measure::cupti_batch_size(50e6) == 1);
    CHECK(measure::cupti_batch_size(0) == 1);
  }

  TEST_CASE("busy time counts overlapping records once") {
    CHECK(measure::busy_ns({}) == 0);
    CHECK(measure::busy_ns({{0, 10}, {20, 25}}) == 15);
    CHECK(measure::busy_ns({{5, 15}, {0, 10}}) == 15);  // any order
    CHECK(measure::busy_ns({{0, 100}, {10, 20}, {90, 120}}) == 120);
    CHECK(measure::busy_ns({{0, 10}, {7, 7}, {30, 20}}) == 10);  // empty and reversed ignored
  }

  TEST_CASE("a call's CUPTI time: busy time for one record, span for several") {
    const auto one = measure::call_time({{100, 300}});
    CHECK(one.records == 1);
    CHECK(one.busy_ns == 200);
    CHECK(one.span_ns == 200);
    CHECK(one.sample_ns() == 200);
    // Three kernels with an idle gap of 500 ns (a sync between them): busy 300, span 800. The
    // gap is the call's time; a regression that adds one must show.
    const auto three = measure::call_time({{0, 100}, {100, 200}, {700, 800}});
    CHECK(three.records == 3);
    CHECK(three.busy_ns == 300);
    CHECK(three.span_ns == 800);
    CHECK(three.sample_ns() == 800);
    // Empty and reversed records are no records.
    const auto none = measure::call_time({{5, 5}, {9, 3}});
    CHECK(none.records == 0);
    CHECK(none.sample_ns() == 0);
  }

  TEST_CASE("the picker takes the span of a multi-kernel call and keeps busy time beside it") {
    DurationPicker p(true);
    CHECK(p.pick(900, measure::call_time({{0, 100}, {700, 800}}), 1) == 800);
    CHECK(p.pick(1'800, measure::call_time({{0, 1'600}}), 2) == 800);  // a graph batch of 2
    const auto m = p.metrics();
    CHECK(m.at("measure.cupti_fraction") == 1.0);
    CHECK(m.at("measure.cupti.span.median_ns") == doctest::Approx(800));
    CHECK(m.at("measure.cupti.busy.median_ns") == doctest::Approx(500));  // of 200 and 800
    // No records of the call: the events' time, counted as missing.
    CHECK(p.pick(1'000, std::optional<measure::CallTime>{}, 1) == 1'000);
    CHECK(p.metrics().at("measure.cupti_fraction") == doctest::Approx(2.0 / 3.0));
  }

  TEST_CASE("CUPTI durations are the samples, events the cross-check") {
    DurationPicker p(true);
    CHECK(p.pick(1'100, 1'000) == 1'000);
    CHECK(p.pick(2'200, 2'000) == 2'000);
    p.end_session();
    CHECK(p.cupti());
    const auto m = p.metrics();
    CHECK(m.at("measure.cupti_fraction") == 1.0);
    CHECK(m.at("measure.events_over_cupti") == doctest::Approx(1.1));
    CHECK(m.at("measure.events.median_ns") == doctest::Approx(1'650));
    CHECK(p.notes().empty());
  }

  TEST_CASE("a graph-batched sample is divided by its calls") {
    DurationPicker p(true);
    CHECK(p.pick(64'000, 60'000, 32) == 1'875);
    CHECK(p.metrics().at("measure.events.median_ns") == 2'000);
    CHECK(p.metrics().at("measure.events_over_cupti") == doctest::Approx(64.0 / 60.0));
  }

  TEST_CASE("picker: CUPTI that cannot start gives events, and a note that says why") {
    DurationPicker p(true);
    p.cupti_unavailable(
        "CUPTI could not start: CUPTI activity tracing is already active in "
        "this process");
    CHECK_FALSE(p.cupti());
    CHECK(p.pick(1'100, 1'000) == 1'100);
    const auto m = p.metrics();
    CHECK(m.at("measure.cupti_fraction") == 0.0);
    CHECK(m.count("measure.events_over_cupti") == 0);
    REQUIRE(p.notes().size() == 1);
    CHECK(p.notes()[0] ==
          "CUPTI kernel durations unavailable (CUPTI could not start: CUPTI activity tracing is "
          "already active in this process): samples are CUDA event times (about 0.5 us "
          "resolution, launch gaps included)");
    p.cupti_unavailable("again");  // the first reason stays the only one
    CHECK(p.notes().size() == 1);
  }

  TEST_CASE("CUPTI that records nothing of the call is given up after one session") {
    DurationPicker p(true);
    CHECK(p.pick(1'100, std::nullopt) == 1'100);
    CHECK(p.pick(1'300, std::nullopt) == 1'300);
    p.end_session();
    CHECK_FALSE(p.cupti());
    REQUIRE(p.notes().size() == 1);
    CHECK(p.notes()[0] ==
          "CUPTI kernel durations unavailable (CUPTI recorded no kernel, memcpy or memset of the "
          "call): samples are CUDA event times (about 0.5 us resolution, launch gaps included)");
    CHECK(p.metrics().at("measure.cupti_fraction") == 0.0);
  }

  TEST_CASE("samples CUPTI missed now and then are events, and counted") {
    DurationPicker p(true);
    CHECK(p.pick(1'100, 1'000) == 1'000);
    CHECK(p.pick(1'200, std::nullopt) == 1'200);
    p.end_session();
    CHECK(p.cupti());
    CHECK(p.metrics().at("measure.cupti_fraction") == 0.5);
    REQUIRE(p.notes().size() == 1);
    CHECK(p.notes()[0] ==
          "1 of 2 samples had no CUPTI records of the call and are CUDA event "
          "times");
  }

  TEST_CASE("events only when CUPTI is not asked for: no notes") {
    DurationPicker p(false);
    CHECK(p.pick(1'100, 1'000) == 1'100);
    p.end_session();
    CHECK(p.notes().empty());
    CHECK(p.metrics().at("measure.cupti_fraction") == 0.0);
  }

  TEST_CASE("notes are kept once") {
    DurationPicker p(true);
    p.note("CUPTI dropped 3 activity records (buffers full)");
    p.note("CUPTI dropped 3 activity records (buffers full)");
    CHECK(p.notes().size() == 1);
  }
}
