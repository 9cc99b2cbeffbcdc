// A Timer for CPU cases: std::chrono::steady_clock around one call of a function.
#pragma once

#include <functional>

#include "harness/measure/timer.h"

namespace attnprof::measure {

class WallClockTimer : public Timer {
 public:
  // `prepare`, when given, runs before each call, untimed (fresh inputs, cache eviction).
  explicit WallClockTimer(std::function<void()> call, std::function<void()> prepare = {});
  core::Sample sample() override;

 private:
  std::function<void()> m_call, m_prepare;
};

}  // namespace attnprof::measure
