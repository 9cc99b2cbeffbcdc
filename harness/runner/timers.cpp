#include "harness/runner/timers.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>

#include "harness/env/nvml.h"
#include "harness/runner/workload.h"
#include "harness/stats/quantile.h"
#include "harness/util/error.h"

#ifdef ATTNPROF_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include <unordered_map>

#include "harness/trace/cupti_tracer.h"
#include "kernels/cuda/blocking.h"
#endif

namespace attnprof::runner {

bool use_graph_batch(double probe_median_ns) {
  return probe_median_ns > 0 && probe_median_ns < graph_threshold_ns;
}

int graph_batch_size(double probe_median_ns) {
  constexpr double target_replay_ns = 128'000;
  if (probe_median_ns <= 0) return 64;
  return std::clamp(static_cast<int>(std::ceil(target_replay_ns / probe_median_ns)), 16, 64);
}

int cupti_batch_size(double sample_wall_ns) {
  constexpr double target_session_ns = 20e6;
  if (sample_wall_ns <= 0) return 1;
  return std::clamp(static_cast<int>(target_session_ns / sample_wall_ns), 1, 32);
}

std::int64_t busy_ns(std::vector<std::pair<std::int64_t, std::int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::int64_t total = 0;
  std::int64_t covered_to = INT64_MIN;
  for (auto [start, end] : intervals) {
    if (end <= start) continue;
    start = std::max(start, covered_to);
    if (end > start) total += end - start;
    covered_to = std::max(covered_to, end);
  }
  return total;
}

CallTime call_time(std::vector<std::pair<std::int64_t, std::int64_t>> intervals) {
  CallTime t;
  std::int64_t first = INT64_MAX, last = INT64_MIN;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    ++t.records;
    first = std::min(first, start);
    last = std::max(last, end);
  }
  if (t.records == 0) return t;
  t.span_ns = last - first;
  t.busy_ns = busy_ns(std::move(intervals));
  return t;
}

void DurationPicker::note(std::string text) {
  if (std::find(m_notes.begin(), m_notes.end(), text) == m_notes.end())
    m_notes.push_back(std::move(text));
}

void DurationPicker::cupti_unavailable(const std::string& why) {
  if (!m_cupti) return;
  m_cupti = false;
  note(
      fmt::format("CUPTI kernel durations unavailable ({}): samples are CUDA event times "
                  "(about 0.5 us resolution, launch gaps included)",
                  why));
}

std::int64_t DurationPicker::pick(std::int64_t event_ns, std::optional<std::int64_t> cupti_ns,
                                  int calls) {
  calls = std::max(calls, 1);
  const auto per_call = [calls](std::int64_t ns) {
    return static_cast<std::int64_t>(std::llround(double(ns) / calls));
  };
  m_event_ns.push_back(double(per_call(event_ns)));
  if (m_cupti && cupti_ns && *cupti_ns > 0) {
    ++m_cupti_samples;
    m_ratios.push_back(double(event_ns) / double(*cupti_ns));
    return per_call(*cupti_ns);
  }
  if (m_cupti) ++m_missing;
  ++m_event_samples;
  return per_call(event_ns);
}

std::int64_t DurationPicker::pick(std::int64_t event_ns, const std::optional<CallTime>& cupti,
                                  int calls) {
  if (!cupti || cupti->records == 0) return pick(event_ns, std::optional<std::int64_t>{}, calls);
  const std::int64_t ns = pick(event_ns, cupti->sample_ns(), calls);
  if (m_cupti) {
    const double k = std::max(calls, 1);
    m_busy_ns.push_back(double(cupti->busy_ns) / k);
    m_span_ns.push_back(double(cupti->span_ns) / k);
  }
  return ns;
}

void DurationPicker::end_session() {
  if (m_cupti && m_cupti_samples == 0 && m_missing > 0)
    cupti_unavailable("CUPTI recorded no kernel, memcpy or memset of the call");
}

std::map<std::string, double> DurationPicker::metrics() const {
  std::map<std::string, double> m;
  const int n = m_cupti_samples + m_event_samples;
  if (n == 0) return m;
  m["measure.cupti_fraction"] = double(m_cupti_samples) / n;
  m["measure.events.median_ns"] = stats::median(m_event_ns);
  if (!m_ratios.empty()) m["measure.events_over_cupti"] = stats::median(m_ratios);
  if (!m_busy_ns.empty()) {
    m["measure.cupti.busy.median_ns"] = stats::median(m_busy_ns);
    m["measure.cupti.span.median_ns"] = stats::median(m_span_ns);
  }
  return m;
}

std::vector<std::string> DurationPicker::notes() const {
  std::vector<std::string> out = m_notes;
  // Missing records after CUPTI recorded the call at least once: some samples are events.
  if (m_cupti_samples > 0 && m_missing > 0)
    out.push_back(
        fmt::format("{} of {} samples had no CUPTI records of the call and are CUDA "
                    "event times",
                    m_missing, m_cupti_samples + m_event_samples));
  return out;
}

namespace {

std::int64_t epoch_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class CpuTimer final : public CaseTimer {
 public:
  explicit CpuTimer(std::function<void()> call) : m_call(std::move(call)) {}
  core::Sample sample() override {
    core::Sample s;
    s.at_ns = epoch_ns();
    auto t0 = std::chrono::steady_clock::now();
    m_call();
    auto t1 = std::chrono::steady_clock::now();
    s.ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    return s;
  }

 private:
  std::function<void()> m_call;
};

#ifdef ATTNPROF_HAVE_CUDA
#define ATTNPROF_CHECK_CUDA(call)                                                            \
  do {                                                                                       \
    const cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess)                                                                   \
      throw util::EnvironmentError(fmt::format("{}: {} ({}) ({}:{})", #call,                 \
                                               cudaGetErrorString(e_), cudaGetErrorName(e_), \
                                               __FILE__, __LINE__));                         \
  } while (0)

void check(const kernels::Status& s) {
  if (!s.ok()) throw util::EnvironmentError(s.message);
}

std::string pci_bus_id(int device) {
  char bus[32] = {};
  return cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess ? std::string(bus) : "";
}

// The first line of an exception's text: c10::Error appends a C++ backtrace.
std::string first_line(const std::exception& e) {
  if (const auto* c10e = dynamic_cast<const c10::Error*>(&e)) {
    std::string s = c10e->what_without_backtrace();
    return s.substr(0, s.find('\n'));
  }
  std::string s = e.what();
  return s.substr(0, s.find('\n'));
}

class CudaTimer final : public CaseTimer {
 public:
  CudaTimer(int device, std::function<void()> call, const TimerOptions& options)
      : m_device(device), m_call(std::move(call)), m_options(options), m_picker(options.cupti) {
    int l2 = 0;
    ATTNPROF_CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    // Twice the L2: one memset of exactly its size may not evict a partitioned L2 (H100/H200).
    m_flush = at::empty({2 * int64_t(l2)},
                        at::TensorOptions().dtype(at::kByte).device(at::Device(at::kCUDA, device)));
    ATTNPROF_CHECK_CUDA(cudaEventCreate(&m_start));
    ATTNPROF_CHECK_CUDA(cudaEventCreate(&m_stop));
    check(m_blocker.init());
    m_nvml_device = env::Nvml::instance().device(pci_bus_id(device));
    if (m_picker.cupti()) {
      std::string why;
      if (trace::device_tracing_available(&why))
        m_tracer = trace::make_cupti_tracer();
      else
        m_picker.cupti_unavailable(why);
    }
  }
  ~CudaTimer() override {
    if (m_tracing) {
      try {
        m_tracer->stop();
      } catch (const std::exception&) {
        // Nothing to report to at this point; the tracer leaves CUPTI disabled either way.
      }
    }
    m_graph.reset();  // before the events and the flush buffer; it uses neither
    cudaEventDestroy(m_start);
    cudaEventDestroy(m_stop);
  }

  core::Sample sample() override {
    if (m_ready.empty()) take_batch();
    core::Sample s = m_ready.front();
    m_ready.pop_front();
    return s;
  }

  std::map<std::string, double> metrics() const override {
    auto m = m_picker.metrics();
    m["measure.graph_batch"] = m_graph_calls;  // 0: single cold calls
    m["measure.blocking_kernel"] = m_blocking ? 1 : 0;
    return m;
  }
  std::vector<std::string> notes() const override { return m_picker.notes(); }

  void finish() override {
    m_ready.clear();
    stop_tracing();
  }

 private:
  void stop_tracing() {
    if (!m_tracing) return;
    m_tracing = false;
    try {
      m_tracer->stop();
    } catch (const util::EnvironmentError& e) {
      m_picker.note(fmt::format("CUPTI did not stop cleanly: {}", first_line(e)));
    }
  }

  // What one timed call (or graph replay) measured, before the duration is chosen.
  struct Raw {
    std::int64_t at_ns = 0;
    std::int64_t event_ns = 0;
    std::optional<double> sm_clock_mhz;
    std::uint64_t id = 0;  // external-correlation id pushed around the call; 0: none
  };

  static constexpr double kBlockTimeoutS = 10.0;
  // The first probe call: a call that waits for the GPU deadlocks behind the blocking kernel
  // until the timeout; one second tells it from any plausible enqueue time.
  static constexpr double kProbeTimeoutS = 1.0;
  static constexpr int kProbeCalls = 5;

  // Flush (cold samples only), sync, block, start, the call, stop, release, wait.
  Raw timed_call(std::uint64_t id, double block_timeout_s) {
    cudaStream_t stream = at::cuda::getCurrentCUDAStream(m_device);
    if (m_graph_calls == 0)
      ATTNPROF_CHECK_CUDA(cudaMemsetAsync(m_flush.data_ptr(), 0, m_flush.numel(), stream));
    ATTNPROF_CHECK_CUDA(cudaStreamSynchronize(stream));
    Raw r;
    r.id = id;
    {
      // Whatever the call throws, the stream must not stay blocked, nor the id pushed.
      struct Unwind {
        CudaTimer& t;
        bool blocked = false, pushed = false;
        ~Unwind() {
          if (pushed) t.m_tracer->pop_external_id();
          if (blocked) t.m_blocker.release();
        }
      } unwind{*this};
      if (m_blocking) {
        check(m_blocker.block(stream, block_timeout_s));
        unwind.blocked = true;
      }
      r.at_ns = epoch_ns();
      ATTNPROF_CHECK_CUDA(cudaEventRecord(m_start, stream));
      if (id != 0) {
        m_tracer->push_external_id(id);
        unwind.pushed = true;
      }
      if (m_exec)
        ATTNPROF_CHECK_CUDA(cudaGraphLaunch(m_exec, stream));
      else
        m_call();
      if (unwind.pushed) {
        m_tracer->pop_external_id();
        unwind.pushed = false;
      }
      ATTNPROF_CHECK_CUDA(cudaEventRecord(m_stop, stream));
    }
    ATTNPROF_CHECK_CUDA(cudaEventSynchronize(m_stop));
    if (m_blocking && m_blocker.timed_out()) {
      // Either the call waits for the GPU (it synchronizes) or it took this long to enqueue;
      // both make the blocking kernel useless for this case, and a 10 s stall per sample.
      m_blocking = false;
      m_picker.note(fmt::format(
          "the blocking kernel timed out after {} s (the call waits for the GPU, or takes that "
          "long to enqueue): samples include the host's launch overhead",
          block_timeout_s));
    }
    float ms = 0;
    ATTNPROF_CHECK_CUDA(cudaEventElapsedTime(&ms, m_start, m_stop));
    r.event_ns = static_cast<std::int64_t>(std::llround(double(ms) * 1e6));
    r.sm_clock_mhz = env::Nvml::instance().sm_clock_mhz(m_nvml_device);
    return r;
  }

  // A few cold calls with events decide how this case is sampled. They are not samples.
  void probe() {
    m_probed = true;
    // Unblocked first: whatever the first call does once (lazy module loading, library handles,
    // workspace and allocator growth) may synchronize, and behind the blocking kernel that
    // stalls until its timeout, or deadlocks in lazy loading. The measure engine's warm-up runs
    // through sample(), so this is the case's first call.
    m_call();
    ATTNPROF_CHECK_CUDA(cudaDeviceSynchronize());
    const std::int64_t t0 = steady_ns();
    std::vector<double> ns;
    for (int i = 0; i < kProbeCalls; ++i)
      ns.push_back(double(timed_call(0, i == 0 ? kProbeTimeoutS : kBlockTimeoutS).event_ns));
    m_wall_per_sample_ns = double(steady_ns() - t0) / kProbeCalls;
    const double median = stats::median(ns);
    if (m_options.graph_batching && use_graph_batch(median))
      capture(graph_batch_size(median), median);
  }

  // Captures `calls` calls into a CUDA graph on a side stream (at::cuda::CUDAGraph refuses the
  // default stream, and its private memory pool keeps the call's allocations valid for replay).
  void capture(int calls, double call_ns) {
    const auto side = at::cuda::getStreamFromPool(/*isHighPriority=*/false, m_device);
    try {
      ATTNPROF_CHECK_CUDA(cudaDeviceSynchronize());
      at::cuda::CUDAStreamGuard on_side(side);
      // Warm up on the side stream first: library handles and workspaces are per stream.
      for (int i = 0; i < 2; ++i) m_call();
      ATTNPROF_CHECK_CUDA(cudaStreamSynchronize(side.stream()));
      m_graph = std::make_unique<at::cuda::CUDAGraph>();
      m_graph->capture_begin();
      try {
        for (int i = 0; i < calls; ++i) m_call();
      } catch (...) {
        end_failed_capture(side);
        throw;
      }
      m_graph->capture_end();
      m_graph->replay();  // instantiates where capture_end did not; also the graph's warm-up
      ATTNPROF_CHECK_CUDA(cudaStreamSynchronize(side.stream()));
      // Launched directly in samples: replay() also refills the RNG seed tensors of the graph's
      // generators, small kernels that are no part of the call.
      m_exec = m_graph->raw_cuda_graph_exec();
      m_graph_calls = calls;
    } catch (const std::exception& e) {
      end_failed_capture(side);
      m_graph.reset();
      m_exec = nullptr;
      m_graph_calls = 0;
      cudaGetLastError();  // capture errors are not sticky; clear them for the calls that follow
      m_picker.note(
          fmt::format("CUDA-graph batching of this {:.1f} us call failed ({}): samples "
                      "are single cold calls",
                      call_ns / 1e3, first_line(e)));
    }
  }

  // Leaves neither the side stream capturing nor the allocator routing to the graph's pool.
  void end_failed_capture(const at::cuda::CUDAStream& side) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(side.stream(), &status) != cudaSuccess ||
        status == cudaStreamCaptureStatusNone)
      return;
    if (m_graph) {
      try {
        at::cuda::CUDAStreamGuard on_side(side);
        m_graph->capture_end();  // ends the allocator's capture pool, then the stream's capture
      } catch (const std::exception&) {
        // cudaErrorStreamCaptureInvalidated, expected here.
      }
    }
    if (cudaStreamIsCapturing(side.stream(), &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
      cudaGraph_t g = nullptr;
      if (cudaStreamEndCapture(side.stream(), &g) == cudaSuccess && g) cudaGraphDestroy(g);
    }
    cudaGetLastError();
  }

  // Runs a batch of samples and queues them, with their CUPTI records read in one flush. CUPTI
  // is enabled at the first batch and stays on until finish(): enabling and disabling it per
  // batch costs a device synchronize and CUPTI's own setup each time.
  void take_batch() {
    if (!m_probed) probe();
    const int n = m_picker.cupti() ? cupti_batch_size(m_wall_per_sample_ns) : 1;
    if (m_picker.cupti() && !m_tracing) {
      try {
        m_tracer->start();
        m_tracing = true;
      } catch (const util::EnvironmentError& e) {
        m_picker.cupti_unavailable(fmt::format("CUPTI could not start: {}", first_line(e)));
      }
    }
    bool traced = m_tracing;
    std::vector<Raw> raw;
    const std::int64_t t0 = steady_ns();
    for (int i = 0; i < n; ++i) raw.push_back(timed_call(traced ? ++m_last_id : 0, kBlockTimeoutS));
    m_wall_per_sample_ns = double(steady_ns() - t0) / n;

    std::unordered_map<std::uint64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> spans;
    if (traced) {
      try {
        trace::DeviceRecords rec = m_tracer->collect();
        for (const auto& d : rec.device)
          if (d.external_id != 0)
            spans[d.external_id].emplace_back(std::int64_t(d.start_ns), std::int64_t(d.end_ns));
        for (auto& note : rec.notes) m_picker.note(std::move(note));
      } catch (const util::EnvironmentError& e) {
        m_picker.cupti_unavailable(fmt::format("CUPTI could not flush: {}", first_line(e)));
        stop_tracing();
        traced = false;
      }
    }
    const int calls = std::max(m_graph_calls, 1);
    for (const Raw& r : raw) {
      std::optional<CallTime> cupti;
      if (traced) {
        auto it = spans.find(r.id);
        if (it != spans.end()) cupti = call_time(std::move(it->second));
      }
      core::Sample s;
      s.at_ns = r.at_ns;
      s.sm_clock_mhz = r.sm_clock_mhz;
      s.ns = m_picker.pick(r.event_ns, cupti, calls);
      m_ready.push_back(s);
    }
    if (traced) {
      m_picker.end_session();
      if (!m_picker.cupti()) stop_tracing();  // given up: leave CUPTI free
    }
  }

  int m_device;
  std::function<void()> m_call;
  TimerOptions m_options;
  DurationPicker m_picker;
  at::Tensor m_flush;
  cudaEvent_t m_start{}, m_stop{};
  kernels::cuda::StreamBlocker m_blocker;
  bool m_blocking = true;
  std::unique_ptr<trace::DeviceTracer> m_tracer;
  bool m_tracing = false;  // m_tracer started, until finish()
  void* m_nvml_device = nullptr;
  std::uint64_t m_last_id = 0;
  bool m_probed = false;
  double m_wall_per_sample_ns = 0;
  std::unique_ptr<at::cuda::CUDAGraph> m_graph;
  cudaGraphExec_t m_exec = nullptr;
  int m_graph_calls = 0;
  // Samples taken in the current CUPTI session, not yet handed to the engine. Where the engine
  // stops in the middle of a batch, the rest are never used.
  std::deque<core::Sample> m_ready;
};
#endif

}  // namespace

std::unique_ptr<CaseTimer> make_timer(const core::Case& c, std::function<void()> call) {
  return make_timer(c, std::move(call), TimerOptions{});
}

std::unique_ptr<CaseTimer> make_timer(const core::Case& c, std::function<void()> call,
                                      const TimerOptions& options) {
#ifdef ATTNPROF_HAVE_CUDA
  if (c.hardware.device.rfind("cuda", 0) == 0)
    return std::make_unique<CudaTimer>(device_of(c).index() < 0 ? 0 : device_of(c).index(),
                                       std::move(call), options);
#endif
  (void)c;
  (void)options;
  return std::make_unique<CpuTimer>(std::move(call));
}

}  // namespace attnprof::runner
