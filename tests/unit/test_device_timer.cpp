// The GPU timer's mode decisions (harness/measure/device_timer.h) on fake parts that feed
// scripted timings and log what the timer asked of the device: the unblocked first call, cold
// calls vs CUDA-graph batches, CUPTI vs events, the blocking kernel's fallback, CUPTI enabled
// once per case. No GPU needed; tests/device/test_timers.cpp runs the CUDA parts.
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>

#include "harness/core/metric_names.h"
#include "harness/measure/device_timer.h"
#include "harness/util/error.h"

using namespace attnprof;
using measure::DeviceTimer;

namespace {

// What the fakes share: the script (durations, failures) and the log of what the timer did.
struct FakeDevice {
  std::vector<std::string> log;
  // The events' duration of the n-th timed call or replay (0-based), in ns.
  std::function<std::int64_t(int)> event_ns = [](int) { return 50'000; };
  int timed = 0;
  // The blocking kernel gives up on these calls of block() (0-based).
  std::vector<int> block_times_out;
  int blocks = 0;
  bool last_block_timed_out = false;
  // Graph capture: fails with this text where set.
  std::optional<std::string> capture_fails;
  // CUPTI: start fails with this text where set; records of a call from its id (none: empty).
  std::optional<std::string> start_fails;
  std::function<std::vector<std::pair<std::int64_t, std::int64_t>>(std::uint64_t)> records =
      [](std::uint64_t) {
        return std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 40'000}};
      };
  std::vector<std::uint64_t> pushed;  // since the last collect
  int starts = 0, stops = 0, collects = 0;
  bool throw_in_call = false;

  std::size_t count(const std::string& line) const {
    return static_cast<std::size_t>(std::count(log.begin(), log.end(), line));
  }
};

struct Events final : measure::Events {
  FakeDevice& d;
  explicit Events(FakeDevice& dev) : d(dev) {}
  void wait_idle() override { d.log.push_back("wait_idle"); }
  void wait_device() override { d.log.push_back("wait_device"); }
  void record_start() override { d.log.push_back("start"); }
  void record_stop() override { d.log.push_back("stop"); }
  std::int64_t elapsed_ns() override { return d.event_ns(d.timed++); }
};

struct Flush final : measure::L2Flush {
  FakeDevice& d;
  explicit Flush(FakeDevice& dev) : d(dev) {}
  void flush() override { d.log.push_back("flush"); }
};

struct Blocker final : measure::BlockingKernel {
  FakeDevice& d;
  explicit Blocker(FakeDevice& dev) : d(dev) {}
  void block(double timeout_s) override {
    d.log.push_back("block " + std::to_string(int(timeout_s)));
    const auto& out = d.block_times_out;
    d.last_block_timed_out = std::find(out.begin(), out.end(), d.blocks++) != out.end();
  }
  void release() noexcept override { d.log.push_back("release"); }
  bool timed_out() const override { return d.last_block_timed_out; }
};

struct Graph final : measure::GraphBatch {
  FakeDevice& d;
  explicit Graph(FakeDevice& dev) : d(dev) {}
  std::optional<std::string> capture(int calls) override {
    d.log.push_back("capture " + std::to_string(calls));
    return d.capture_fails;
  }
  void launch() override { d.log.push_back("launch"); }
};

struct Recorder final : measure::CallRecorder {
  FakeDevice& d;
  explicit Recorder(FakeDevice& dev) : d(dev) {}
  void start() override {
    d.log.push_back("cupti start");
    if (d.start_fails) throw util::EnvironmentError(*d.start_fails);
    ++d.starts;
  }
  void push(std::uint64_t id) noexcept override { d.pushed.push_back(id); }
  void pop() noexcept override { d.log.push_back("pop"); }
  Records collect() override {
    ++d.collects;
    Records r;
    for (auto id : d.pushed) {
      auto rec = d.records(id);
      if (!rec.empty()) r.calls[id] = rec;
    }
    d.pushed.clear();
    return r;
  }
  void stop() override {
    d.log.push_back("cupti stop");
    ++d.stops;
  }
};

struct Clock final : measure::ClockReader {
  std::optional<double> sm_clock_mhz() override { return 1980.0; }
};

// The CUDA reader's shape: a reading before the call (the timestamps kernel's first stamp) and
// one after it, and the share of samples the kernel gave a clock for.
struct StampedClock final : measure::ClockReader {
  FakeDevice& d;
  explicit StampedClock(FakeDevice& dev) : d(dev) {}
  void before_call() override { d.log.push_back("stamp"); }
  void after_call() override { d.log.push_back("stamp after"); }
  std::optional<double> sm_clock_mhz() override {
    d.log.push_back("clock");
    return 1755.0;
  }
  std::optional<double> timestamped_share() const override { return 0.75; }
};

measure::DeviceParts parts(FakeDevice& d, bool cupti = true) {
  measure::DeviceParts p;
  p.call = [&d] {
    d.log.push_back("call");
    if (d.throw_in_call) throw std::runtime_error("the call failed");
  };
  p.events = std::make_unique<Events>(d);
  p.flush = std::make_unique<Flush>(d);
  p.blocker = std::make_unique<Blocker>(d);
  p.graph = std::make_unique<Graph>(d);
  if (cupti) p.recorder = std::make_unique<Recorder>(d);
  p.clock = std::make_unique<Clock>();
  return p;
}

measure::DeviceTimerOptions events_only() {
  measure::DeviceTimerOptions o;
  o.cupti = false;
  return o;
}

std::vector<std::string> first(const std::vector<std::string>& log, std::size_t n) {
  return {log.begin(), log.begin() + static_cast<std::ptrdiff_t>(std::min(n, log.size()))};
}

}  // namespace

TEST_SUITE("measure::DeviceTimer") {
  TEST_CASE("the first call runs unblocked and is waited for; then cold probe calls, blocked") {
    FakeDevice d;
    DeviceTimer t(parts(d), events_only());
    t.sample();
    const std::vector<std::string> expected = {
        "call",  "wait_device",                                                   // unblocked
        "flush", "wait_idle",   "block 1",  "start", "call", "stop", "release",   // probe 1: 1 s
        "flush", "wait_idle",   "block 10", "start", "call", "stop", "release"};  // probe 2
    CHECK(first(d.log, expected.size()) == expected);
    CHECK(d.count("call") == 1 + DeviceTimer::kProbeCalls + 1);  // the sample itself is the last
  }

  TEST_CASE("the clock brackets each timed call: before the start event, right after the stop") {
    FakeDevice d;
    measure::DeviceParts p = parts(d);
    p.clock = std::make_unique<StampedClock>(d);
    DeviceTimer t(std::move(p), events_only());
    CHECK(t.sample().sm_clock_mhz == 1755.0);
    const std::vector<std::string> expected = {
        "call",  "wait_device",                                        // unblocked: no clock
        "flush", "wait_idle",   "block 1", "stamp", "start", "call",  // probe 1
        "stop",  "stamp after", "release", "clock"};
    CHECK(first(d.log, expected.size()) == expected);
    CHECK(d.count("stamp") == d.count("clock"));
    CHECK(d.count("stamp after") == d.count("clock"));
    CHECK(t.metrics().at(core::kClockTimestampedMetric) == 0.75);
    // A reader without the kernel (NVML alone): no share in the record.
    FakeDevice plain;
    DeviceTimer n(parts(plain), events_only());
    n.sample();
    CHECK(n.metrics().count(core::kClockTimestampedMetric) == 0);
  }

  TEST_CASE("calls of 20 us and more: single cold calls, each after an L2 flush, no graph") {
    FakeDevice d;  // 50 us calls
    DeviceTimer t(parts(d), events_only());
    for (int i = 0; i < 3; ++i) CHECK(t.sample().ns == 50'000);
    CHECK(d.count("flush") == DeviceTimer::kProbeCalls + 3);
    CHECK(d.count("launch") == 0);
    for (const auto& line : d.log) CHECK(line.rfind("capture", 0) == std::string::npos);
    CHECK(t.metrics().at("measure.graph_batch") == 0);
    CHECK(t.notes().empty());
  }

  TEST_CASE("measure.l2 warm: single calls without the flush, and the record says so") {
    FakeDevice d;  // 50 us calls: single calls
    measure::DeviceTimerOptions o = events_only();
    o.l2_warm = true;
    DeviceTimer t(parts(d), o);
    for (int i = 0; i < 3; ++i) t.sample();
    CHECK(d.count("flush") == 0);
    CHECK(t.metrics().at("measure.l2_flushed") == 0);
    FakeDevice cold;
    DeviceTimer c(parts(cold), events_only());
    c.sample();
    CHECK(c.metrics().at("measure.l2_flushed") == 1);
  }

  TEST_CASE("calls under 20 us: a graph of K calls, a sample is one warm replay / K") {
    FakeDevice d;
    // Probe calls take 4 us; a replay of K = 32 calls takes 32 x 4.1 us.
    d.event_ns = [](int n) { return n < DeviceTimer::kProbeCalls ? 4'000 : 32 * 4'100; };
    DeviceTimer t(parts(d), events_only());
    const core::Sample s = t.sample();
    CHECK(s.ns == 4'100);
    CHECK(s.sm_clock_mhz == 1980.0);
    CHECK(d.count("capture 32") == 1);
    CHECK(d.count("launch") == 1);
    CHECK(d.count("flush") == DeviceTimer::kProbeCalls);  // replays are warm: no flush
    CHECK(t.metrics().at("measure.graph_batch") == 32);
  }

  TEST_CASE("a capture that fails leaves single cold calls, and a note that says why") {
    FakeDevice d;
    d.event_ns = [](int) { return 4'000; };
    d.capture_fails = "operation not permitted when stream is capturing";
    DeviceTimer t(parts(d), events_only());
    CHECK(t.sample().ns == 4'000);
    CHECK(d.count("launch") == 0);
    CHECK(d.count("flush") == DeviceTimer::kProbeCalls + 1);
    CHECK(t.metrics().at("measure.graph_batch") == 0);
    REQUIRE(t.notes().size() == 1);
    CHECK(t.notes()[0] ==
          "CUDA-graph batching of this 4.0 us call failed (operation not permitted when stream "
          "is capturing): samples are single cold calls");
  }

  TEST_CASE("graph batching turned off, or no graph part: cold calls however short the call") {
    FakeDevice d;
    d.event_ns = [](int) { return 4'000; };
    measure::DeviceTimerOptions o = events_only();
    o.graph_batching = false;
    DeviceTimer t(parts(d), o);
    t.sample();
    CHECK(d.count("capture 32") == 0);
    FakeDevice d2;
    d2.event_ns = [](int) { return 4'000; };
    auto p = parts(d2);
    p.graph.reset();
    DeviceTimer t2(std::move(p), events_only());
    CHECK(t2.sample().ns == 4'000);
    CHECK(t2.metrics().at("measure.graph_batch") == 0);
  }

  TEST_CASE("a blocking kernel that times out is dropped for the case, with a note") {
    FakeDevice d;
    d.block_times_out = {0};  // the first probe call waits for the GPU
    DeviceTimer t(parts(d), events_only());
    t.sample();
    t.sample();
    CHECK(d.count("block 1") == 1);
    CHECK(d.count("block 10") == 0);  // never again
    CHECK(d.count("release") == 1);
    CHECK(t.metrics().at("measure.blocking_kernel") == 0);
    REQUIRE(t.notes().size() == 1);
    CHECK(t.notes()[0] ==
          "the blocking kernel timed out after 1 s (the call waits for the GPU, or takes that "
          "long to enqueue): samples include the host's launch overhead");
  }

  TEST_CASE("a blocking kernel that is released in time stays, and leaves no note") {
    FakeDevice d;
    DeviceTimer t(parts(d), events_only());
    t.sample();
    CHECK(t.metrics().at("measure.blocking_kernel") == 1);
    CHECK(d.count("release") == d.count("start"));
  }

  TEST_CASE("CUPTI's time is the sample, the events the cross-check; CUPTI starts once per case") {
    FakeDevice d;  // events 50 us, CUPTI 40 us
    DeviceTimer t(parts(d), {});
    // The probe is events only; the fake calls take no wall time, so a batch is 32 samples.
    for (int i = 0; i < 70; ++i) CHECK(t.sample().ns == 40'000);
    CHECK(d.starts == 1);
    CHECK(d.collects == 3);
    CHECK(d.stops == 0);
    const auto m = t.metrics();
    CHECK(m.at("measure.cupti_fraction") == 1.0);
    CHECK(m.at("measure.events_over_cupti") == doctest::Approx(1.25));
    CHECK(m.at("measure.events.median_ns") == 50'000);
    t.finish();
    CHECK(d.stops == 1);
    t.finish();  // once
    CHECK(d.stops == 1);
    t.sample();  // sampling after finish() starts a new session
    CHECK(d.starts == 2);
  }

  TEST_CASE("a call of several kernels: the sample is their span, gaps included") {
    FakeDevice d;
    d.records = [](std::uint64_t) {
      return std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 10'000}, {30'000, 40'000}};
    };
    DeviceTimer t(parts(d), {});
    CHECK(t.sample().ns == 40'000);
    CHECK(t.metrics().at("measure.cupti.busy.median_ns") == 20'000);
    CHECK(t.metrics().at("measure.cupti.span.median_ns") == 40'000);
  }

  TEST_CASE("timer: CUPTI that cannot start is not tried again; events, and a note") {
    FakeDevice d;
    d.start_fails = "CUPTI activity tracing is already active in this process";
    DeviceTimer t(parts(d), {});
    CHECK(t.sample().ns == 50'000);
    t.sample();
    CHECK(d.count("cupti start") == 1);  // not tried again
    CHECK(t.metrics().at("measure.cupti_fraction") == 0.0);
    REQUIRE(t.notes().size() == 1);
    CHECK(t.notes()[0] ==
          "CUPTI kernel durations unavailable (CUPTI could not start: CUPTI activity tracing is "
          "already active in this process): samples are CUDA event times (about 0.5 us "
          "resolution, launch gaps included)");
  }

  TEST_CASE("CUPTI that records nothing of the call is given up after one batch, and stopped") {
    FakeDevice d;
    d.records = [](std::uint64_t) { return std::vector<std::pair<std::int64_t, std::int64_t>>{}; };
    DeviceTimer t(parts(d), {});
    CHECK(t.sample().ns == 50'000);
    CHECK(d.stops == 1);
    for (int i = 0; i < 40; ++i) t.sample();
    CHECK(d.starts == 1);
    CHECK(d.collects == 1);
    CHECK(t.metrics().at("measure.cupti_fraction") == 0.0);
    REQUIRE(t.notes().size() == 1);
    CHECK(t.notes()[0].find("CUPTI recorded no kernel, memcpy or memset of the call") !=
          std::string::npos);
  }

  TEST_CASE("no CUPTI recorder on this machine: events, with the reason") {
    FakeDevice d;
    auto p = parts(d, /*cupti=*/false);
    p.no_recorder = "no GPU: cudaGetDeviceCount: no CUDA-capable device is detected";
    DeviceTimer t(std::move(p), {});
    CHECK(t.sample().ns == 50'000);
    REQUIRE(t.notes().size() == 1);
    CHECK(t.notes()[0] ==
          "CUPTI kernel durations unavailable (no GPU: cudaGetDeviceCount: no CUDA-capable "
          "device is detected): samples are CUDA event times (about 0.5 us resolution, launch "
          "gaps included)");
  }

  TEST_CASE("a call that throws leaves the stream released and the id popped") {
    FakeDevice d;
    DeviceTimer t(parts(d), {});
    t.sample();  // probe and a first batch
    d.log.clear();
    d.throw_in_call = true;
    // Drain the batch already taken, then the next one calls and throws.
    CHECK_THROWS_WITH(
        [&] {
          for (int i = 0; i < 64; ++i) t.sample();
        }(),
        "the call failed");
    CHECK(d.count("pop") == 1);
    CHECK(d.count("release") == 1);
  }
}
