// The two clocks the measurement stage reads: steady (budgets, durations) and the epoch (a
// sample's timestamp). One definition for the engine and the GPU timer.
#pragma once

#include <chrono>
#include <cstdint>

namespace attnprof::measure {

inline std::int64_t steady_ns() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
}

inline std::int64_t epoch_ns() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace attnprof::measure
