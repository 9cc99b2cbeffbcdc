// The GPU timer's arithmetic, apart from any GPU (device_time.h): batch sizes, a call's time
// from its CUPTI records, and which of a sample's two durations is the sample.
#include "harness/measure/device_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "harness/stats/quantile.h"

namespace attnprof::measure {

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

}  // namespace attnprof::measure
