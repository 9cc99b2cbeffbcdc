// How one sample of a case is timed.
//
// CPU: wall clock around the call (steady_clock), with the intra-op thread count fixed.
//
// CUDA, in the nvbench manner:
//   - Cold samples: the L2 is flushed by a memset over twice its size and the stream synced.
//   - The blocking kernel (kernels/cuda/blocking.h) holds the stream while "event start; the
//     call; event stop" are enqueued, then is released: the host's launch overhead is hidden.
//   - Before the first timed call, one call runs unblocked and is waited for: lazy module
//     loading, library handles and allocator growth may synchronize, which behind the blocking
//     kernel would stall until its timeout (CUDA's lazy-loading deadlock).
//   - The sample comes from CUPTI's records of the kernels, memcpys and memsets the call launched
//     (external-correlation id pushed around the call): their busy time (overlaps counted once)
//     for a call of one record, their span (first start to last end) for a call of several, so
//     a gap or a sync added between a call's kernels shows; both are kept as metrics. CUPTI is
//     enabled once per case and flushed per batch of samples (finish() ends it). CUDA
//     events around the call are the cross-check ("measure.events_over_cupti") and the fallback
//     when CUPTI cannot start or records nothing, which the timer's notes say. CUPTI is primary
//     because events quantize at about 0.5 us (2.5% of a 20 us kernel) and include the gaps
//     between the call's kernels and the event records themselves; CUPTI reads the device's own
//     start/end timestamps in ns.
//   - Tiny calls (a probe's median under graph_threshold_ns) are captured K times into a CUDA
//     graph; a sample is one replay / K ("measure.graph_batch" = K). These samples are warm: the
//     L2 is not flushed between the K calls, as in nvbench's batch mode and a decode loop.
//     Where capture fails (the call synchronizes or allocates in a way capture rejects), samples
//     stay single cold calls and a note says why.
//   - The SM clock is read through NVML (when the driver provides it) for throttle detection.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/types.h"
#include "harness/measure/engine.h"

namespace attnprof::runner {

// A Timer that also says how it timed, for the case result: named metrics ("measure.graph_batch",
// "measure.cupti_fraction", ...) and notes (each fallback, with its reason). Read them after
// measure::run.
class CaseTimer : public measure::Timer {
 public:
  virtual std::map<std::string, double> metrics() const { return {}; }
  virtual std::vector<std::string> notes() const { return {}; }
  // Releases what the timer holds across samples (the CUDA timer's CUPTI session) before the
  // traced pass, which starts its own. Sampling after finish() starts a new session.
  virtual void finish() {}
};

struct TimerOptions {
  bool graph_batching = true;  // CUDA: batch calls shorter than graph_threshold_ns in a graph
  bool cupti = true;           // CUDA: CUPTI durations as the sample; false: CUDA events only
};

std::unique_ptr<CaseTimer> make_timer(const core::Case& c, std::function<void()> call);
std::unique_ptr<CaseTimer> make_timer(const core::Case& c, std::function<void()> call,
                                      const TimerOptions& options);

// The CUDA timer's decisions, apart from it so that they are tested without a GPU.

// Below 20 us a cold sample's fixed costs (event resolution, the gap after the blocking kernel)
// are several percent of the call; the notes' threshold for "short kernels".
inline constexpr double graph_threshold_ns = 20'000;
bool use_graph_batch(double probe_median_ns);
// Calls per graph: enough for a replay of about 128 us, at least 16 and at most 64 (beyond 64 a
// sample takes long to capture and the per-call figure gains nothing).
int graph_batch_size(double probe_median_ns);
// Samples per CUPTI flush: the records of a batch of samples are read together (each flush
// waits for the device). About 20 ms of samples per batch, 1 to 32.
int cupti_batch_size(double sample_wall_ns);
// Time covered by the union of [start, end) intervals: overlapping records count once.
std::int64_t busy_ns(std::vector<std::pair<std::int64_t, std::int64_t>> intervals);

// What CUPTI recorded of one call: busy time (the union), span (first start to last end) and
// how many records (empty or reversed ones left out).
struct CallTime {
  std::int64_t busy_ns = 0, span_ns = 0;
  int records = 0;
  // The sample: the span where the call has several records (the gaps between its kernels are
  // the call's time too), the busy time where it has one.
  std::int64_t sample_ns() const { return records > 1 ? span_ns : busy_ns; }
};
CallTime call_time(std::vector<std::pair<std::int64_t, std::int64_t>> intervals);

// Which of a GPU sample's two durations is the sample, and what the case should say about it.
// CUPTI's busy time when CUPTI recorded the call, else the CUDA events; notes for every
// fallback; the events-over-CUPTI ratio as the cross-check.
class DurationPicker {
 public:
  explicit DurationPicker(bool cupti) : m_cupti(cupti) {}
  // Whether CUPTI durations are (still) wanted.
  bool cupti() const { return m_cupti; }
  // CUPTI could not be used: events from here on, with the reason in a note.
  void cupti_unavailable(const std::string& why);
  // The duration of one call of a sample that ran `calls` calls (a graph batch: K, else 1).
  std::int64_t pick(std::int64_t event_ns, std::optional<std::int64_t> cupti_ns, int calls = 1);
  // The same from CUPTI's view of the call (CallTime::sample_ns), keeping busy time and span.
  std::int64_t pick(std::int64_t event_ns, const std::optional<CallTime>& cupti, int calls);
  // After each CUPTI session: if CUPTI has not recorded the call once, it is not going to.
  void end_session();
  // A note for the case, once however often it is added.
  void note(std::string text);

  std::map<std::string, double> metrics() const;
  std::vector<std::string> notes() const;

 private:
  bool m_cupti;
  int m_cupti_samples = 0;         // samples whose duration is CUPTI's
  int m_event_samples = 0;         // samples whose duration is the events'
  int m_missing = 0;               // of those, samples CUPTI should have recorded but did not
  std::vector<double> m_event_ns;  // per call, every sample
  std::vector<double> m_ratios;    // events / CUPTI, samples with both
  std::vector<double> m_busy_ns, m_span_ns;  // per call, samples with a CallTime
  std::vector<std::string> m_notes;
};

}  // namespace attnprof::runner
