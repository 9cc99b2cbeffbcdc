// The timers of timers.h: wall clock on the CPU, and on a GPU measure::DeviceTimer wired to the
// CUDA parts (cuda_parts.h) on the case's device and current stream.
#include "worker/runner/timers.h"

#include <sys/resource.h>

#include <chrono>
#include <ctime>

#include "harness/core/clock.h"
#include "worker/runner/workload.h"

#ifdef ATTNPROF_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>

#include "worker/runner/cuda_parts.h"
#endif

namespace attnprof::runner {
namespace {

// What the process can see of being descheduled (core/stability.h): its CPU time, every thread
// together, and its threads' involuntary context switches so far.
struct Sched {
  std::int64_t cpu_ns = 0, invol = 0;
};
Sched sched_now() {
  Sched s;
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) == 0) s.invol = ru.ru_nivcsw;
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
    s.cpu_ns = std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
  return s;
}

class CpuTimer final : public CaseTimer {
 public:
  explicit CpuTimer(std::function<void()> call) : m_call(std::move(call)) {}
  core::Sample sample() override {
    core::Sample s;
    s.at_ns = core::epoch_ns();
    // Read outside the timed region, nested around it: the record spans the call and a little
    // more, never less.
    const Sched before = sched_now();
    auto t0 = std::chrono::steady_clock::now();
    m_call();
    auto t1 = std::chrono::steady_clock::now();
    const Sched after = sched_now();
    s.ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    s.cpu_ns = after.cpu_ns - before.cpu_ns;
    s.invol_switches = after.invol - before.invol;
    return s;
  }

 private:
  std::function<void()> m_call;
};

#ifdef ATTNPROF_HAVE_CUDA
std::unique_ptr<CaseTimer> make_cuda_timer(int device, std::function<void()> call,
                                           const TimerOptions& options) {
  const cuda::StreamSource stream = [device] {
    return at::cuda::getCurrentCUDAStream(device).stream();
  };
  // One call object for the timed calls and the graph's capture: a call with state of its own
  // (a counter, a first-call flag) must see every call.
  auto shared = std::make_shared<std::function<void()>>(std::move(call));
  const std::function<void()> one = [shared] { (*shared)(); };
  measure::DeviceParts parts;
  parts.call = one;
  parts.events = cuda::make_events(stream);
  parts.flush = cuda::make_l2_flush(device, stream);
  parts.blocker = cuda::make_blocking_kernel(stream);
  parts.graph = cuda::make_graph_batch(device, one, stream);
  if (options.cupti) parts.recorder = cuda::make_cupti_recorder(&parts.no_recorder);
  parts.clock = cuda::make_clock_reader(device);
  return std::make_unique<measure::DeviceTimer>(std::move(parts), options);
}
#endif

}  // namespace

std::unique_ptr<CaseTimer> make_timer(const core::Case& c, std::function<void()> call) {
  return make_timer(c, std::move(call), TimerOptions{});
}

std::unique_ptr<CaseTimer> make_timer(const core::Case& c, std::function<void()> call,
                                      const TimerOptions& options) {
#ifdef ATTNPROF_HAVE_CUDA
  if (c.hardware.device.rfind("cuda", 0) == 0)
    return make_cuda_timer(std::max<int>(0, device_of(c).index()), std::move(call), options);
#endif
  (void)c;
  (void)options;
  return std::make_unique<CpuTimer>(std::move(call));
}

}  // namespace attnprof::runner
