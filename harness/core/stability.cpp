// Descheduled and throttled samples, shared GPUs, and unstable cases (stability.h).
#include "harness/core/stability.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace attnprof::core {

namespace {

double median_of(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const std::size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

// The median of the kept samples that were not descheduled, and how far it lies from the case's
// median in half-widths of the interval on its side. The median's interval is the summary's, of
// the same kept samples (measure::summarize), so both medians are read one way.
void add_shift(const CaseResult& r, Stability& st) {
  const Summary& s = r.summary;
  if (s.n == 0 || s.ci_high_ns <= 0) return;  // no interval to judge against
  std::vector<double> undisturbed;
  for (const Sample& x : r.samples)
    if (!x.dropped && !descheduled(x, r.spec.hardware.threads))
      undisturbed.push_back(static_cast<double>(x.ns));
  if (undisturbed.empty()) return;  // every sample descheduled: the share says it
  st.undisturbed_median_ns = median_of(std::move(undisturbed));
  const double moved = s.median_ns - st.undisturbed_median_ns;  // > 0: they made it slower
  const double half = moved >= 0 ? s.median_ns - s.ci_low_ns : s.ci_high_ns - s.median_ns;
  if (moved == 0)
    st.figures.shift = 0;
  else if (half <= 0)
    st.figures.shift = std::copysign(kMaxShift, moved);
  else
    st.figures.shift = std::clamp(moved / half, -kMaxShift, kMaxShift);
}

// The GPU samples' clocks against the expected one: how many ran throttled, and at what clock.
// Where a user's clock setting alone held the clock down (a lock below the boost clock), the
// expected clock is the one it held: the median of the samples' clocks.
void add_throttled(const CaseResult& r, Stability& st, std::uint64_t reasons) {
  if (clock_held_by_setting(reasons) && st.expected_clock_mhz > 0) {
    std::vector<double> clocks;
    for (const Sample& x : r.samples)
      if (x.sm_clock_mhz) clocks.push_back(*x.sm_clock_mhz);
    if (!clocks.empty()) {
      const double held = median_of(std::move(clocks));
      if (held < st.expected_clock_mhz) st.expected_clock_mhz = st.held_clock_mhz = held;
    }
  }
  std::vector<double> slow;
  for (const Sample& x : r.samples) {
    if (!x.sm_clock_mhz) continue;
    ++st.clocked;
    if (throttled(x, st.expected_clock_mhz)) slow.push_back(*x.sm_clock_mhz);
  }
  st.throttled = static_cast<int>(slow.size());
  if (st.clocked == 0 || st.expected_clock_mhz <= 0) return;
  st.figures.throttled = static_cast<double>(st.throttled) / st.clocked;
  if (!slow.empty()) st.throttled_clock_mhz = median_of(std::move(slow));
}

bool too_descheduled(const StabilityFigures& f, const MeasureSettings& m) {
  if (f.descheduled < 0) return false;
  if (f.descheduled > m.max_descheduled) return true;
  if (f.shift) return std::abs(*f.shift) > m.max_descheduled_shift;
  return f.descheduled > kLegacyDescheduledShare;
}

// Each reason the figures give, in the order a reader weighs them; `st` adds what only the
// samples say (the throttled clock, the driver's reasons).
std::vector<std::string> reasons(const StabilityFigures& f, const MeasureSettings& m,
                                 const Stability* st) {
  std::vector<std::string> out;
  if (too_descheduled(f, m)) {
    std::string d = fmt::format("descheduled in {:.0f}% of samples", 100 * f.descheduled);
    if (f.descheduled > m.max_descheduled)
      d += fmt::format(" (more than {:.0f}%)", 100 * m.max_descheduled);
    else if (f.shift && std::abs(*f.shift) >= kMaxShift)
      d += ", which moved the median out of its interval";
    else if (f.shift)
      d += fmt::format(", which moved the median by {:.1f}x its interval", std::abs(*f.shift));
    out.push_back(std::move(d));
  }
  if (f.throttled > m.max_throttled) {
    if (st && st->throttled_clock_mhz > 0 && st->expected_clock_mhz > 0)
      out.push_back(fmt::format("throttled: SM clock {} of {} MHz in {:.0f}% of samples{}",
                                grouped(st->throttled_clock_mhz), grouped(st->expected_clock_mhz),
                                100 * f.throttled,
                                st->throttle_reasons.empty() ? "" : "; " + st->throttle_reasons));
    else
      out.push_back(fmt::format("throttled in {:.0f}% of samples", 100 * f.throttled));
  }
  if (f.other_processes > 0)
    out.push_back(fmt::format("its GPU shared with {} other process{}", f.other_processes,
                              f.other_processes == 1 ? "" : "es"));
  return out;
}

std::string joined(const std::vector<std::string>& parts) {
  if (parts.empty()) return "";
  std::string out = "unstable: ";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

}  // namespace

bool descheduled(const Sample& s, int threads) {
  if (s.wait_ns) return static_cast<double>(*s.wait_ns) > kDescheduledWait * static_cast<double>(s.ns);
  if (!s.cpu_ns || !s.invol_switches || *s.invol_switches < 1) return false;
  const double capacity = static_cast<double>(std::max(1, threads)) * static_cast<double>(s.ns);
  return static_cast<double>(*s.cpu_ns) < (1 - kDescheduledShortfall) * capacity;
}

bool throttled(const Sample& s, double expected_mhz) {
  return expected_mhz > 0 && s.sm_clock_mhz && *s.sm_clock_mhz < kThrottledClock * expected_mhz;
}

bool unstable(const StabilityFigures& f, const MeasureSettings& m) {
  return too_descheduled(f, m) || f.throttled > m.max_throttled || f.other_processes > 0;
}

std::string unstable_note(const StabilityFigures& f, const MeasureSettings& m) {
  return joined(reasons(f, m, nullptr));
}

std::string throttle_reason_names(std::uint64_t mask) {
  // NVML's nvmlClocksEventReason* bits (nvml.h), as nvidia-smi -q words them.
  static constexpr std::pair<std::uint64_t, const char*> kNames[] = {
      {0x2, "applications clocks setting"},
      {0x4, "power cap"},
      {0x8, "hardware slowdown"},
      {0x10, "sync boost"},
      {0x20, "software thermal slowdown"},
      {0x40, "hardware thermal slowdown"},
      {0x80, "power brake"},
      {0x100, "display clock setting"}};
  std::string out;
  for (const auto& [bit, name] : kNames)
    if (mask & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::string grouped(double mhz) {
  const std::string digits = fmt::format("{:.0f}", mhz);
  const std::size_t sign = !digits.empty() && digits[0] == '-' ? 1 : 0;
  std::string out = digits.substr(0, sign);
  for (std::size_t i = sign; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

bool clock_held_by_setting(std::uint64_t mask) {
  constexpr std::uint64_t kIdle = 0x1, kSetting = 0x2;
  return (mask & kSetting) != 0 && (mask & ~(kIdle | kSetting)) == 0;
}

Stability stability(const CaseResult& r) {
  Stability st;
  StabilityFigures& f = st.figures;
  auto metric = [&](const char* name) -> std::optional<double> {
    auto it = r.metrics.find(name);
    return it == r.metrics.end() ? std::nullopt : std::optional<double>(it->second);
  };
  for (const Sample& s : r.samples) {
    if (!s.wait_ns && (!s.cpu_ns || !s.invol_switches)) continue;
    ++st.recorded;
    st.descheduled += descheduled(s, r.spec.hardware.threads);
  }
  st.load = metric(kLoadMetric).value_or(-1);
  st.cores = static_cast<int>(metric(kCoresMetric).value_or(0));
  if (st.recorded > 0) {
    st.share = f.descheduled = static_cast<double>(st.descheduled) / st.recorded;
    add_shift(r, st);
  } else if (auto d = metric(kDescheduledMetric)) {
    st.share = f.descheduled = *d;  // a run read without its samples: what the worker stored
    f.shift = metric(kDescheduledShiftMetric);
  }
  st.expected_clock_mhz = metric(kExpectedClockMetric).value_or(0);
  const auto mask = static_cast<std::uint64_t>(metric(kThrottleReasonsMetric).value_or(0));
  st.throttle_reasons = throttle_reason_names(mask);
  add_throttled(r, st, mask);
  if (f.throttled < 0) f.throttled = metric(kThrottledMetric).value_or(-1);
  f.other_processes = static_cast<int>(metric(kOtherProcessesMetric).value_or(0));
  st.unstable = unstable(f, r.spec.measure);
  if (!st.unstable) return st;
  st.note = joined(reasons(f, r.spec.measure, &st));
  if (st.load >= 0 && st.cores > 0 && too_descheduled(f, r.spec.measure))
    st.note +=
        fmt::format("; load {:.1f} on {} core{}", st.load, st.cores, st.cores == 1 ? "" : "s");
  return st;
}

void add_stability_metrics(const Stability& st, std::map<std::string, double>& metrics) {
  if (st.recorded > 0) {
    metrics[kDescheduledMetric] = st.figures.descheduled;
    if (st.figures.shift) metrics[kDescheduledShiftMetric] = *st.figures.shift;
  }
  if (st.clocked > 0 && st.figures.throttled >= 0) metrics[kThrottledMetric] = st.figures.throttled;
  if (st.held_clock_mhz > 0) metrics[kHeldClockMetric] = st.held_clock_mhz;
}

}  // namespace attnprof::core
