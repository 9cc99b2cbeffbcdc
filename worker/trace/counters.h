// Hardware counters through CUPTI's range profiler (CUDA >= 12.6 API; the old events/metrics
// API is gone in 13.0): DRAM bytes read and written and GPU time over the traced body, for
// achieved bandwidth measured rather than modelled. The config image is built by CUPTI's host
// API, which needs no GPU, so that part is tested on every machine (tests/cuda).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attnprof::trace {

// dram__bytes_read.sum, dram__bytes_write.sum, gpu__time_duration.sum: one pass on GH100.
const std::vector<std::string>& default_counter_metrics();

struct CounterConfig {
  std::string chip;  // "GH100"
  std::vector<std::string> metrics;
  std::vector<std::uint8_t> image;  // for cuptiRangeProfilerSetConfig
  std::size_t passes = 0;           // replays of the body needed to collect every metric
};

// Builds the range profiler's config image for `metrics` on `chip` with the host API. An empty
// counter_availability builds offline (no device); on a device pass its availability image so
// CUPTI leaves out counters the system hides. Throws util::EnvironmentError naming the chip and
// the metric when CUPTI rejects one.
CounterConfig build_counter_config(const std::string& chip, const std::vector<std::string>& metrics,
                                   const std::vector<std::uint8_t>& counter_availability = {});

// Chips the host API knows ("GH100", "GA100", ...).
std::vector<std::string> supported_counter_chips();

// On a GPU: runs `body` under the range profiler in one user range, replaying it as many times
// as the metrics need, and returns each metric's value over the range. Device 0's current
// context. Where the system forbids profiling (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) the
// util::EnvironmentError says so and how to allow it. Never call without a GPU.
std::map<std::string, double> measure_counters(const std::function<void()>& body,
                                               const std::vector<std::string>& metrics);

}  // namespace attnprof::trace
