// The GPU timer's arithmetic and its choice of duration, apart from any GPU: when calls are
// batched in a CUDA graph and how many, how many samples share a CUPTI flush, a call's time from
// its CUPTI records (busy time and span), and which of a sample's two durations (CUPTI's or the
// CUDA events') is the sample, with the notes each fallback leaves. device_timer.h uses them;
// tests/unit/test_device_time.cpp checks them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnprof::measure {

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

}  // namespace attnprof::measure
