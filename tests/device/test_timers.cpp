// The CUDA timer on a GPU (worker/runner/timers.h) and the kernels it uses
// (kernels/cuda/blocking.h): the blocking kernel holds a stream until released and gives up on
// its timeout; CUPTI and event durations of a kernel of known length agree; graph-batched
// samples of a 10 us kernel match single cold samples; launch overhead stays outside the sample;
// a call that synchronizes falls back and says so; a first call that synchronizes runs before
// the blocking kernel; a gap between a call's kernels is in its sample; graph replays' kernels
// have CUPTI records; CUPTI is free for the traced pass after finish(). Each test skips (passes
// with a message) where there is no GPU.
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "harness/measure/engine.h"
#include "kernels/cuda/blocking.h"
#include "tests/device/device_test.h"
#include "tests/torch/torch_doctest.h"
#include "worker/runner/timers.h"
#include "worker/trace/cupti_tracer.h"

using namespace attnprof;
using kernels::cuda::spin_for;
using kernels::cuda::StreamBlocker;

namespace {

using attnprof::device_test::have_gpu;

#define STATUS_REQUIRE(call)                               \
  do {                                                     \
    const auto s_ = (call);                                \
    REQUIRE_MESSAGE(s_.ok(), #call << ": " << s_.message); \
  } while (0)

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

cudaStream_t current_stream() {
  return at::cuda::getCurrentCUDAStream(0).stream();
}

core::Case cuda_case() {
  core::Case c;
  c.key = "test/timers";
  c.hardware.device = "cuda:0";
  return c;
}

core::MeasureSettings quick() {
  core::MeasureSettings s;
  s.warmup_ms = 20;
  s.min_samples = 30;
  s.max_samples = 300;
  s.time_budget_s = 4;
  return s;
}

struct Measured {
  measure::Result result;
  std::map<std::string, double> metrics;
  std::vector<std::string> notes;
  double metric(const std::string& name) const {
    auto it = metrics.find(name);
    return it == metrics.end() ? -1 : it->second;
  }
};

Measured measure_call(std::function<void()> call, runner::TimerOptions options = {}) {
  auto timer = runner::make_timer(cuda_case(), std::move(call), options);
  Measured m;
  m.result = measure::run(*timer, quick());
  m.metrics = timer->metrics();
  m.notes = timer->notes();
  for (const auto& [k, v] : m.metrics) MESSAGE(k << " = " << v);
  for (const auto& n : m.notes) MESSAGE("note: " << n);
  MESSAGE("median " << m.result.summary.median_ns << " ns over " << m.result.summary.n
                    << " samples (" << m.result.stop_reason << ")");
  return m;
}

void spin(std::int64_t ns) {
  const auto s = spin_for(ns, current_stream());
  if (!s.ok()) throw std::runtime_error(s.message);
}

}  // namespace

TEST_SUITE("kernels::cuda::StreamBlocker") {
  TEST_CASE("device: the blocking kernel holds the stream until released") {
    if (!have_gpu()) return;
    StreamBlocker blocker;
    STATUS_REQUIRE(blocker.init());
    cudaStream_t stream = nullptr;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    STATUS_REQUIRE(blocker.block(stream, 10.0));
    STATUS_REQUIRE(spin_for(1'000, stream));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(cudaStreamQuery(stream) == cudaErrorNotReady);  // still held after 50 ms
    const auto t0 = std::chrono::steady_clock::now();
    blocker.release();
    CUDA_REQUIRE(cudaStreamSynchronize(stream));
    CHECK(seconds_since(t0) < 1.0);
    CHECK_FALSE(blocker.timed_out());
    CUDA_REQUIRE(cudaStreamDestroy(stream));
  }

  TEST_CASE("device: the blocking kernel gives up on its timeout and says so") {
    if (!have_gpu()) return;
    StreamBlocker blocker;
    STATUS_REQUIRE(blocker.init());
    cudaStream_t stream = nullptr;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const auto t0 = std::chrono::steady_clock::now();
    STATUS_REQUIRE(blocker.block(stream, 0.2));
    CUDA_REQUIRE(cudaStreamSynchronize(stream));  // never released
    const double waited = seconds_since(t0);
    CHECK(waited >= 0.19);
    CHECK(waited < 5.0);
    CHECK(blocker.timed_out());
    // The next block starts afresh.
    STATUS_REQUIRE(blocker.block(stream, 10.0));
    blocker.release();
    CUDA_REQUIRE(cudaStreamSynchronize(stream));
    CHECK_FALSE(blocker.timed_out());
    CUDA_REQUIRE(cudaStreamDestroy(stream));
  }
}

TEST_SUITE("kernels::cuda::SmTimestamps") {
  // The clock over a 5 ms spin, from SM 0's cycles over %globaltimer, against the clock NVML
  // reads right after it: on a GPU under load both sit at the boost clock (the device check
  // compares the per-sample clocks with nvidia-smi's over a whole case).
  TEST_CASE("device: the timestamps kernel's clock over a spin is a plausible SM clock") {
    if (!have_gpu()) return;
    int sms = 0;
    CUDA_REQUIRE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    kernels::cuda::SmTimestamps stamps;
    STATUS_REQUIRE(stamps.init(sms));
    cudaStream_t stream = current_stream();
    std::vector<double> mhz;
    for (int i = 0; i < 20; ++i) {
      STATUS_REQUIRE(stamps.stamp(stream, true));
      STATUS_REQUIRE(spin_for(5'000'000, stream));
      STATUS_REQUIRE(stamps.stamp(stream, false));
      CUDA_REQUIRE(cudaStreamSynchronize(stream));
      mhz.push_back(stamps.mhz());
    }
    std::sort(mhz.begin(), mhz.end());
    MESSAGE("timestamps kernel: SM clock " << mhz.front() << " to " << mhz.back() << " MHz");
    CHECK(mhz[mhz.size() / 2] > 200);   // no GPU of this decade runs its SMs slower
    CHECK(mhz[mhz.size() / 2] < 4000);  // nor faster
    // Through the timer: every sample has a clock, nearly all of them from the kernel.
    Measured m = measure_call([] { spin(200'000); });
    CHECK(m.metric("gpu.clock.timestamped") > 0.9);
    for (const auto& s : m.result.samples) CHECK(s.sm_clock_mhz.has_value());
  }
}

TEST_SUITE("runner::CudaTimer") {
  TEST_CASE("device: CUPTI and event durations of a 200 us kernel agree") {
    if (!have_gpu()) return;
    const Measured m = measure_call([] { spin(200'000); });
    REQUIRE_MESSAGE(m.metric("measure.cupti_fraction") == 1.0, "CUPTI durations were not used");
    CHECK(m.metric("measure.graph_batch") == 0);  // far above the threshold
    CHECK(m.metric("measure.blocking_kernel") == 1);
    CHECK(m.metric("measure.events_over_cupti") == doctest::Approx(1.0).epsilon(0.03));
    CHECK(m.result.summary.median_ns >= 199'000);
    CHECK(m.result.summary.median_ns < 206'000);
    CHECK(m.notes.empty());
  }

  TEST_CASE("device: graph-batched samples of a 10 us kernel match single cold samples") {
    if (!have_gpu()) return;
    const Measured batched = measure_call([] { spin(10'000); });
    runner::TimerOptions single_only;
    single_only.graph_batching = false;
    const Measured single = measure_call([] { spin(10'000); }, single_only);
    CHECK(batched.metric("measure.graph_batch") >= 16);
    CHECK(single.metric("measure.graph_batch") == 0);
    CHECK(batched.notes.empty());
    const double b = batched.result.summary.median_ns, s = single.result.summary.median_ns;
    CHECK(b >= 9'900);
    CHECK(b < 12'000);
    CHECK(b == doctest::Approx(s).epsilon(0.05));
  }

  TEST_CASE("device: the host's launch overhead stays outside the sample") {
    if (!have_gpu()) return;
    // A call that spends 300 us on the host before it launches 30 us of GPU work: behind the
    // blocking kernel, the events see only the GPU work. Events alone, so CUPTI (which would
    // see only the kernel anyway) cannot hide a failing blocking kernel.
    runner::TimerOptions events_only;
    events_only.cupti = false;
    events_only.graph_batching = false;
    const Measured slow_host = measure_call(
        [] {
          std::this_thread::sleep_for(std::chrono::microseconds(300));
          spin(30'000);
        },
        events_only);
    CHECK(slow_host.metric("measure.blocking_kernel") == 1);
    CHECK(slow_host.result.summary.median_ns < 45'000);

    // A tiny kernel: its sample is far below what the host sees for launch + sync.
    std::vector<double> host_ns;
    for (int i = 0; i < 200; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      spin(0);
      CUDA_REQUIRE(cudaStreamSynchronize(current_stream()));
      host_ns.push_back(seconds_since(t0) * 1e9);
    }
    std::nth_element(host_ns.begin(), host_ns.begin() + 100, host_ns.end());
    const double host_median = host_ns[100];
    MESSAGE("host launch + sync of an empty kernel: " << host_median << " ns");
    const Measured tiny = measure_call([] { spin(0); }, events_only);
    CHECK(tiny.result.summary.median_ns < host_median / 2);
  }

  TEST_CASE("device: a call that synchronizes is measured, without blocking or graph, and noted") {
    if (!have_gpu()) return;
    const Measured m = measure_call([] {
      spin(5'000);
      if (cudaStreamSynchronize(current_stream()) != cudaSuccess)
        throw std::runtime_error("cudaStreamSynchronize failed");
    });
    CHECK(m.metric("measure.blocking_kernel") == 0);
    CHECK(m.metric("measure.graph_batch") == 0);
    CHECK(m.result.summary.n > 0);
    bool blocking_noted = false, graph_noted = false;
    for (const auto& n : m.notes) {
      blocking_noted |= n.rfind("the blocking kernel timed out after 1 s", 0) == 0;
      graph_noted |= n.rfind("CUDA-graph batching of this", 0) == 0 &&
                     n.find("samples are single cold calls") != std::string::npos;
    }
    CHECK(blocking_noted);
    CHECK(graph_noted);
  }

  TEST_CASE("device: a first call that synchronizes runs before the blocking kernel, not behind") {
    if (!have_gpu()) return;
    // Like lazy module loading or a library's first handle: only the first call waits for the
    // GPU. It must not meet the blocking kernel (a 1 s stall, and blocking given up for good).
    bool first = true;
    const Measured m = measure_call([&first] {
      spin(20'000);
      if (first) {
        first = false;
        if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error("sync failed");
      }
    });
    CHECK(m.metric("measure.blocking_kernel") == 1);
    CHECK(m.notes.empty());
  }

  TEST_CASE("device: a gap between a call's kernels is in its sample; busy time is beside it") {
    if (!have_gpu()) return;
    // Two 10 us kernels with 200 us of stream idle between them (a host function on the stream,
    // the way a sync or a copy wait would leave it).
    const Measured m = measure_call([] {
      spin(10'000);
      CUDA_REQUIRE(cudaLaunchHostFunc(
          current_stream(),
          [](void*) { std::this_thread::sleep_for(std::chrono::microseconds(200)); }, nullptr));
      spin(10'000);
    });
    REQUIRE(m.metric("measure.cupti_fraction") == 1.0);
    CHECK(m.result.summary.median_ns > 200'000);
    CHECK(m.metric("measure.cupti.busy.median_ns") < 25'000);
    CHECK(m.metric("measure.cupti.span.median_ns") > 200'000);
  }

  TEST_CASE("device: CUPTI records the kernels of graph replays, under the call's id") {
    if (!have_gpu()) return;
    const Measured m = measure_call([] { spin(5'000); });
    CHECK(m.metric("measure.graph_batch") >= 16);
    CHECK(m.metric("measure.cupti_fraction") == 1.0);
    CHECK(m.metric("measure.events_over_cupti") == doctest::Approx(1.0).epsilon(0.1));
  }

  TEST_CASE("device: CUPTI is free for the traced pass once the timer has finished") {
    if (!have_gpu()) return;
    auto timer = runner::make_timer(cuda_case(), [] { spin(50'000); });
    for (int i = 0; i < 40; ++i) (void)timer->sample();
    timer->finish();
    auto tracer = trace::make_cupti_tracer();
    tracer->start();  // throws if the timer still held CUPTI
    spin(1'000);
    const auto rec = tracer->stop();
    CHECK_FALSE(rec.device.empty());
    CHECK(timer->sample().ns > 0);  // and the timer goes on afterwards, in a new session
    timer->finish();
    CHECK(timer->metrics().at("measure.cupti_fraction") == 1.0);
  }
}
