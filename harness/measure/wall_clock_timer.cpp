#include "harness/measure/wall_clock_timer.h"

#include <chrono>

namespace attnprof::measure {

WallClockTimer::WallClockTimer(std::function<void()> call, std::function<void()> prepare)
    : m_call(std::move(call)), m_prepare(std::move(prepare)) {}

core::Sample WallClockTimer::sample() {
  using namespace std::chrono;
  if (m_prepare) m_prepare();
  core::Sample s;
  s.at_ns = duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
  const auto t0 = steady_clock::now();
  m_call();
  const auto t1 = steady_clock::now();
  s.ns = duration_cast<nanoseconds>(t1 - t0).count();
  return s;
}

}  // namespace attnprof::measure
