// DeviceTimer's decisions (device_timer.h): the probe, cold or graph-batched calls, CUPTI or
// events, and every fallback, made on parts that tests replace with fakes.
#include "harness/measure/device_timer.h"

#include <fmt/format.h>

#include "harness/core/clock.h"
#include "harness/core/metric_names.h"
#include "harness/stats/quantile.h"
#include "harness/util/error.h"

namespace attnprof::measure {

using core::epoch_ns;
using core::steady_ns;
namespace {

// The first line of an exception's text (a c10::Error from the call appends a backtrace).
std::string first_line(const std::exception& e) {
  const std::string s = e.what();
  return s.substr(0, s.find('\n'));
}

}  // namespace

DeviceTimer::DeviceTimer(DeviceParts parts, const DeviceTimerOptions& options)
    : m_parts(std::move(parts)), m_options(options), m_picker(options.cupti) {
  if (m_picker.cupti() && !m_parts.recorder)
    m_picker.cupti_unavailable(m_parts.no_recorder.empty() ? "no CUPTI recorder"
                                                           : m_parts.no_recorder);
}

DeviceTimer::~DeviceTimer() {
  if (m_recording) {
    try {
      m_parts.recorder->stop();
    } catch (const std::exception&) {
      // Nothing to report to at this point; the recorder leaves CUPTI disabled either way.
    }
  }
}

core::Sample DeviceTimer::sample() {
  if (m_ready.empty()) take_batch();
  core::Sample s = m_ready.front();
  m_ready.pop_front();
  return s;
}

std::map<std::string, double> DeviceTimer::metrics() const {
  auto m = m_picker.metrics();
  m["measure.graph_batch"] = m_graph_calls;  // 0: single cold calls
  m["measure.blocking_kernel"] = m_blocking ? 1 : 0;
  m["measure.l2_flushed"] = m_graph_calls == 0 && !m_options.l2_warm ? 1 : 0;  // the record's
  if (m_parts.clock)
    if (auto share = m_parts.clock->timestamped_share()) m[core::kClockTimestampedMetric] = *share;
  if (m_watch) m.merge(m_watch->metrics());
  return m;
}

std::vector<std::string> DeviceTimer::notes() const {
  std::vector<std::string> out = m_picker.notes();
  if (m_watch)
    for (auto& n : m_watch->notes()) out.push_back(std::move(n));
  return out;
}

void DeviceTimer::finish() {
  m_ready.clear();
  if (m_watch && !m_watch_ended) {
    m_watch_ended = true;
    m_watch->end(steady_ns(), core::epoch_ns() / 1000, m_calls);
  }
  stop_recording();
}

void DeviceTimer::stop_recording() {
  if (!m_recording) return;
  m_recording = false;
  try {
    m_parts.recorder->stop();
  } catch (const util::EnvironmentError& e) {
    m_picker.note(fmt::format("CUPTI did not stop cleanly: {}", first_line(e)));
  }
}

// Flush (cold samples only), wait, block, start, the call, stop, release, wait.
DeviceTimer::Raw DeviceTimer::timed_call(std::uint64_t id, double block_timeout_s) {
  if (m_graph_calls == 0 && !m_options.l2_warm) m_parts.flush->flush();
  m_parts.events->wait_idle();
  Raw r;
  r.id = id;
  {
    // Whatever the call throws, the stream must not stay blocked, nor the id pushed.
    struct Unwind {
      DeviceParts& parts;
      bool blocked = false, pushed = false;
      ~Unwind() {
        if (pushed) parts.recorder->pop();
        if (blocked) parts.blocker->release();
      }
    } unwind{m_parts};
    if (m_blocking) {
      m_parts.blocker->block(block_timeout_s);
      unwind.blocked = true;
    }
    r.at_ns = epoch_ns();
    if (m_parts.clock) m_parts.clock->before_call();
    m_parts.events->record_start();
    if (id != 0) {
      m_parts.recorder->push(id);
      unwind.pushed = true;
    }
    if (m_graph_calls > 0)
      m_parts.graph->launch();
    else
      m_parts.call();
    if (unwind.pushed) {
      m_parts.recorder->pop();
      unwind.pushed = false;
    }
    m_parts.events->record_stop();
    if (m_parts.clock) m_parts.clock->after_call();
  }
  // Released: the call runs now, and the driver's reasons are the ones it runs under.
  if (m_watch) m_watch->during_call(steady_ns());
  r.event_ns = m_parts.events->elapsed_ns();
  if (m_blocking && m_parts.blocker->timed_out()) {
    // Either the call waits for the GPU (it synchronizes) or it took this long to enqueue; both
    // make the blocking kernel useless for this case, and a stall per sample.
    m_blocking = false;
    m_picker.note(fmt::format(
        "the blocking kernel timed out after {} s (the call waits for the GPU, or takes that "
        "long to enqueue): samples include the host's launch overhead",
        block_timeout_s));
  }
  if (m_parts.clock) r.sm_clock_mhz = m_parts.clock->sm_clock_mhz();
  return r;
}

// A few cold calls with events decide how this case is sampled. They are not samples.
void DeviceTimer::probe() {
  m_probed = true;
  // Unblocked first: whatever the first call does once may synchronize, and behind the blocking
  // kernel that stalls until its timeout. The engine's warm-up runs through sample(), so this is
  // the case's first call.
  m_parts.call();
  m_parts.events->wait_device();
  if (m_parts.monitor) {
    m_watch.emplace(*m_parts.monitor, m_parts.own_pid);
    const OtherProcesses others = m_watch->begin(steady_ns(), core::epoch_ns() / 1000);
    if (m_options.require_idle_gpu && others.count > 0) throw GpuSharedError(others);
  }
  const std::int64_t t0 = steady_ns();
  std::vector<double> ns;
  for (int i = 0; i < kProbeCalls; ++i)
    ns.push_back(double(timed_call(0, i == 0 ? kProbeTimeoutS : kBlockTimeoutS).event_ns));
  m_calls += kProbeCalls;
  m_wall_per_sample_ns = double(steady_ns() - t0) / kProbeCalls;
  const double median = stats::median(ns);
  if (!m_options.graph_batching || !m_parts.graph || !use_graph_batch(median)) return;
  const int calls = graph_batch_size(median);
  if (auto failed = m_parts.graph->capture(calls)) {
    m_picker.note(fmt::format(
        "CUDA-graph batching of this {:.1f} us call failed ({}): samples are single cold calls",
        median / 1e3, *failed));
    return;
  }
  m_graph_calls = calls;
}

// Runs a batch of samples and queues them, with their CUPTI records read in one collect. CUPTI
// is started at the first batch and stays on until finish(): starting and stopping it per batch
// costs a device synchronize and CUPTI's own setup each time.
void DeviceTimer::take_batch() {
  if (!m_probed) probe();
  const int n = m_picker.cupti() ? cupti_batch_size(m_wall_per_sample_ns) : 1;
  if (m_picker.cupti() && !m_recording) {
    try {
      m_parts.recorder->start();
      m_recording = true;
    } catch (const util::EnvironmentError& e) {
      m_picker.cupti_unavailable(fmt::format("CUPTI could not start: {}", first_line(e)));
    }
  }
  bool traced = m_recording;
  std::vector<Raw> raw;
  const std::int64_t t0 = steady_ns();
  for (int i = 0; i < n; ++i) raw.push_back(timed_call(traced ? ++m_last_id : 0, kBlockTimeoutS));
  m_wall_per_sample_ns = double(steady_ns() - t0) / n;
  m_calls += static_cast<std::int64_t>(n) * std::max(m_graph_calls, 1);

  CallRecorder::Records records;
  if (traced) {
    try {
      records = m_parts.recorder->collect();
      for (auto& note : records.notes) m_picker.note(std::move(note));
    } catch (const util::EnvironmentError& e) {
      m_picker.cupti_unavailable(fmt::format("CUPTI could not flush: {}", first_line(e)));
      stop_recording();
      traced = false;
    }
  }
  const int calls = std::max(m_graph_calls, 1);
  for (const Raw& r : raw) {
    std::optional<CallTime> cupti;
    if (traced) {
      auto it = records.calls.find(r.id);
      if (it != records.calls.end()) cupti = call_time(std::move(it->second));
    }
    core::Sample s;
    s.at_ns = r.at_ns;
    s.sm_clock_mhz = r.sm_clock_mhz;
    s.ns = m_picker.pick(r.event_ns, cupti, calls);
    m_ready.push_back(s);
  }
  if (traced) {
    m_picker.end_session();
    if (!m_picker.cupti()) stop_recording();  // given up: leave CUPTI free
  }
}

}  // namespace attnprof::measure
