// How a GPU case's samples are taken, apart from the GPU. DeviceTimer holds the decisions, in
// nvbench's manner (measure_cold, measure_cupti, blocking_kernel, l2flush); the device work is
// done by parts behind the small interfaces below. worker/runner/cuda_parts.h makes the CUDA
// ones; tests/unit/test_device_timer.cpp gives fakes that feed scripted timings, so every mode
// decision and fallback is tested without a GPU.
//
// What DeviceTimer does with its parts:
//   - Before the first timed call, one call runs unblocked and the device is waited for: lazy
//     module loading, library handles and allocator growth may synchronize, which behind the
//     blocking kernel would stall until its timeout (CUDA's lazy-loading deadlock).
//   - A probe of a few cold calls (events) decides the mode: calls under graph_threshold_ns are
//     captured K times into a CUDA graph and a sample is one replay / K (warm: no flush between
//     the K calls, as in nvbench's batch mode); where capture fails, or for longer calls, each
//     sample is one cold call after an L2 flush. The mode is the metric "measure.graph_batch"
//     (K, or 0 for cold calls).
//   - Every timed call: flush (cold calls, unless measure.l2 is warm), wait until the stream is
//     idle, the blocking kernel, start event, the call (its CUPTI external id pushed around
//     it), stop event, release. A blocking kernel that timed out (the call waits for the GPU,
//     or takes seconds to enqueue) is dropped for the rest of the case, with a note.
//   - Around the samples, where NVML is (GpuWatch, gpu_monitor.h): after the first call (this
//     worker then has its context on the device) the expected clock, the throttle reasons, the
//     other processes on the device and the energy counter; at finish() the same again. Their
//     metrics and notes are the timer's; with require_idle_gpu another process ends the case.
//   - CUPTI is started once, at the first batch, and read once per batch of samples
//     (cupti_batch_size: about 20 ms of samples); finish() stops it. A call's CUPTI time is its
//     busy time (one record) or span (several: gaps count); the CUDA events are the cross-check
//     and the fallback (DurationPicker, device_time.h).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/measure/device_time.h"
#include "harness/measure/gpu_monitor.h"
#include "harness/measure/timer.h"

namespace attnprof::measure {

// CUDA events on the timed stream, and waiting for it.
class Events {
 public:
  virtual ~Events() = default;
  virtual void wait_idle() = 0;    // everything enqueued on the timed stream has finished
  virtual void wait_device() = 0;  // everything on the device has finished
  virtual void record_start() = 0;
  virtual void record_stop() = 0;
  virtual std::int64_t elapsed_ns() = 0;  // waits for the stop event; start to stop
};

// Evicts the L2 before a cold call: enqueued on the timed stream.
class L2Flush {
 public:
  virtual ~L2Flush() = default;
  virtual void flush() = 0;
};

// nvbench's blocking kernel (kernels/cuda/blocking.h): holds the timed stream while the host
// enqueues the timed work, so the host's launch overhead stays outside the events.
class BlockingKernel {
 public:
  virtual ~BlockingKernel() = default;
  virtual void block(double timeout_s) = 0;  // enqueues it; throws util::EnvironmentError
  virtual void release() noexcept = 0;
  virtual bool timed_out() const = 0;  // whether the last block() gave up; after elapsed_ns()
};

// The case's call captured `calls` times into a CUDA graph, replayed as one sample.
class GraphBatch {
 public:
  virtual ~GraphBatch() = default;
  // Captures; on failure returns why (the first line of the error) and leaves nothing captured.
  virtual std::optional<std::string> capture(int calls) = 0;
  virtual void launch() = 0;  // one replay, on the timed stream
};

// CUPTI in the timer: records of the kernels, memcpys and memsets of each timed call, grouped
// by the external id pushed around the call.
class CallRecorder {
 public:
  struct Records {
    std::map<std::uint64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> calls;
    std::vector<std::string> notes;  // e.g. dropped records
  };
  virtual ~CallRecorder() = default;
  virtual void start() = 0;  // throws util::EnvironmentError
  virtual void push(std::uint64_t id) noexcept = 0;
  virtual void pop() noexcept = 0;
  virtual Records collect() = 0;  // waits for the device; tracing stays on; throws
  virtual void stop() = 0;        // throws util::EnvironmentError
};

// The SM clock a timed call ran at, for throttle detection. The CUDA reader brackets the call
// with nvbench's timestamps kernel (kernels/cuda/blocking.h: SM 0's cycles over %globaltimer
// nanoseconds, the average clock over the sample), and reads NVML's clock of the moment where
// the kernel gave no reading.
class ClockReader {
 public:
  virtual ~ClockReader() = default;
  // Just before the timed call's start event (after the blocking kernel): where the reader
  // brackets the call, its first reading, outside the events.
  virtual void before_call() {}
  // Just after the call's stop event is recorded, the stream still blocked: its second reading,
  // queued right behind the call, so that the window is the call's and not the host's wait.
  virtual void after_call() {}
  // After the call's stop event has been waited for: the clock; nullopt where it cannot be read.
  virtual std::optional<double> sm_clock_mhz() = 0;
  // The share of readings that came from the timestamps kernel (the rest from NVML); nullopt
  // where the reader has no such kernel.
  virtual std::optional<double> timestamped_share() const { return std::nullopt; }
};

struct DeviceParts {
  std::function<void()> call;  // one call of the case, enqueued on the timed stream
  std::unique_ptr<Events> events;
  std::unique_ptr<L2Flush> flush;
  std::unique_ptr<BlockingKernel> blocker;
  std::unique_ptr<GraphBatch> graph;       // null: no graph batching on this device
  std::unique_ptr<CallRecorder> recorder;  // null: CUDA events only; no_recorder says why
  std::string no_recorder;                 // why there is no recorder (when CUPTI was wanted)
  std::unique_ptr<ClockReader> clock;      // null: no clock readings
  // What the driver says of the device before the samples and after them (gpu_monitor.h): the
  // expected clock, throttle reasons, other processes, energy. Null: nothing (no NVML).
  std::unique_ptr<GpuMonitor> monitor;
  std::uint32_t own_pid = 0;  // this worker's, told from the other processes on the device
};

struct DeviceTimerOptions {
  bool graph_batching = true;  // batch calls shorter than graph_threshold_ns in a graph
  bool cupti = true;           // CUPTI durations as the sample; false: CUDA events only
  // Another process on the device before the samples ends the case (util::EnvironmentError)
  // instead of measuring it shared: `attnprof run --require-idle-gpu`.
  bool require_idle_gpu = false;
  // No L2 flush before single calls (measure.l2: warm): what a kernel costs when its inputs are
  // still in L2 from the call before. Graph batches are warm either way.
  bool l2_warm = false;
};

class DeviceTimer final : public CaseTimer {
 public:
  DeviceTimer(DeviceParts parts, const DeviceTimerOptions& options);
  ~DeviceTimer() override;
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  core::Sample sample() override;
  std::map<std::string, double> metrics() const override;
  std::vector<std::string> notes() const override;
  void finish() override;

  // The blocking kernel's timeouts: the first probe call gets one second (a call that waits for
  // the GPU stalls there until it times out; one second tells it from any plausible enqueue
  // time), every other call ten.
  static constexpr double kBlockTimeoutS = 10.0;
  static constexpr double kProbeTimeoutS = 1.0;
  static constexpr int kProbeCalls = 5;

 private:
  struct Raw {  // one timed call (or graph replay), before the duration is chosen
    std::int64_t at_ns = 0, event_ns = 0;
    std::optional<double> sm_clock_mhz;
    std::uint64_t id = 0;  // external id pushed around the call; 0: none
  };
  Raw timed_call(std::uint64_t id, double block_timeout_s);
  void probe();
  void take_batch();
  void stop_recording();

  DeviceParts m_parts;
  DeviceTimerOptions m_options;
  DurationPicker m_picker;
  bool m_blocking = true;
  bool m_recording = false;  // the recorder started, until finish()
  bool m_probed = false;
  int m_graph_calls = 0;  // 0: single cold calls
  std::uint64_t m_last_id = 0;
  double m_wall_per_sample_ns = 0;
  // Samples of the current batch not yet handed to the engine. Where the engine stops in the
  // middle of a batch, the rest are never used.
  std::deque<core::Sample> m_ready;
  std::optional<GpuWatch> m_watch;  // begun at the probe, ended at finish()
  bool m_watch_ended = false;
  std::int64_t m_calls = 0;  // calls of the case timed since the watch began
};

}  // namespace attnprof::measure
