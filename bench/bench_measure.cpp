// What the measurement engine (harness/measure/engine.h) costs per sample, next to a bare loop
// that takes the same samples with no stopping logic. The engine's work happens between timed
// calls, never inside one, so this is time-to-verdict overhead, not a bias in the figures.
//   1. a scripted Timer with no clock reads (engine bookkeeping alone): engine vs bare loop
//   2. a steady_clock timer around an empty call (the shape of runner/timers.cpp's CPU timer):
//      engine vs a bare steady_clock loop
//
//   build-*/bench/bench_measure [samples=2000] [repeats=20]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "harness/measure/engine.h"
#include "harness/stats/quantile.h"
#include "harness/stats/rng.h"

using namespace attnprof;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// steady_clock around one call, stamped with the system clock: runner/timers.cpp's CPU timer,
// which links LibTorch, in the shape this host-only bench can build.
class WallTimer : public measure::Timer {
 public:
  explicit WallTimer(std::function<void()> call) : m_call(std::move(call)) {}
  core::Sample sample() override {
    using namespace std::chrono;
    core::Sample s;
    s.at_ns = duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
    const auto t0 = steady_clock::now();
    m_call();
    s.ns = duration_cast<nanoseconds>(steady_clock::now() - t0).count();
    return s;
  }

 private:
  std::function<void()> m_call;
};

// Lognormal durations, 3% spread: the CI check does real work but never meets a 0 target.
class NoisyTimer : public measure::Timer {
 public:
  core::Sample sample() override {
    core::Sample s;
    s.ns = static_cast<std::int64_t>(1e5 * (1 + 0.03 * m_rng.normal()));
    s.at_ns = ++m_t;
    return s;
  }

 private:
  stats::Rng m_rng{1};
  std::int64_t m_t = 0;
};

core::MeasureSettings fixed_count(int samples) {
  core::MeasureSettings s;
  s.warmup_ms = 0;
  s.min_samples = 10;  // the CI is evaluated on schedule from the 10th sample on
  s.max_samples = samples;
  s.target_rel_ci = -1;  // never met: exactly `samples` samples
  s.time_budget_s = 1e9;
  return s;
}

template <class F>
double best_of(int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    double t0 = now_s();
    f();
    t.push_back(now_s() - t0);
  }
  return stats::median(t);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
  measure::Options opts;
  opts.warmup_cap_s = 0;  // warm-up ends after its first call: sampling cost only
  std::printf("engine overhead, %d samples per run, median of %d runs\n\n", n, repeats);

  {
    NoisyTimer t;
    const double engine = best_of(repeats, [&] { measure::run(t, fixed_count(n), opts); });
    const double bare = best_of(repeats, [&] {
      std::vector<core::Sample> v;
      for (int i = 0; i < n + 1; ++i) v.push_back(t.sample());
    });
    std::printf(
        "scripted timer:  engine %7.0f ns/sample, bare loop %5.0f ns/sample, "
        "overhead %7.0f ns/sample\n",
        1e9 * engine / n, 1e9 * bare / n, 1e9 * (engine - bare) / n);
  }
  {
    volatile int sink = 0;
    WallTimer t([&] { sink = sink + 1; });
    const double engine = best_of(repeats, [&] { measure::run(t, fixed_count(n), opts); });
    const double bare = best_of(repeats, [&] {
      std::vector<std::int64_t> v;
      for (int i = 0; i < n + 1; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        sink = sink + 1;
        v.push_back((std::chrono::steady_clock::now() - t0).count());
      }
    });
    std::printf(
        "wall-clock timer: engine %7.0f ns/sample, bare loop %5.0f ns/sample, "
        "overhead %7.0f ns/sample\n",
        1e9 * engine / n, 1e9 * bare / n, 1e9 * (engine - bare) / n);
  }
  std::printf("\nAt a 10 us kernel, an overhead of X ns/sample adds X/10000 to time-to-verdict.\n");
  return 0;
}
