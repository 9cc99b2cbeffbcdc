// The two clocks every stage reads: steady (budgets, durations) and the epoch (a sample's
// timestamp, when a run or an annotation was made). The one definition.
#pragma once

#include <chrono>
#include <cstdint>

namespace attnprof::core {

inline std::int64_t steady_ns() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
}

inline std::int64_t epoch_ns() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace attnprof::core
