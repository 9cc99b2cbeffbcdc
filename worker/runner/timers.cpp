// The timers of timers.h: wall clock on the CPU, and on a GPU measure::DeviceTimer wired to the
// CUDA parts (cuda_parts.h) on the case's device and current stream.
#include "worker/runner/timers.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>

#include "harness/core/clock.h"
#include "worker/runner/workload.h"
#ifdef ATTNPROF_HAVE_KERNELS_CPU
#include "kernels/cpu/attention.h"
#endif

#ifdef ATTNPROF_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "worker/runner/cuda_parts.h"
#endif

namespace attnprof::runner {
namespace {

// The time the process's threads have spent runnable but waiting for a CPU so far: the second
// field of each /proc/self/task/TID/schedstat, summed; nullopt where the kernel keeps none. A
// thread that exits between two reads takes its wait with it, which can only lower a sample's
// figure: the sum is clamped at 0. cpu.flash's helper threads, started and ended within each
// call, count what they themselves measured off a CPU.
std::optional<std::int64_t> run_queue_wait_ns() {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return std::nullopt;
  std::int64_t total = 0;
  bool any = false;
  char path[300], buf[128];  // a d_name is at most 255 bytes
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) continue;
    buf[n] = 0;
    unsigned long long on_cpu = 0, waited = 0;
    if (std::sscanf(buf, "%llu %llu", &on_cpu, &waited) != 2) continue;
    total += static_cast<std::int64_t>(waited);
    any = true;
  }
  closedir(dir);
#ifdef ATTNPROF_HAVE_KERNELS_CPU
  // What cpu.flash's helper threads waited before they exited (kernels/cpu/attention.h).
  total += kernels::cpu::exited_threads_wait_ns();
#endif
  return any ? std::optional<std::int64_t>(total) : std::nullopt;
}

// What the process can see of being descheduled (core/stability.h): its CPU time, every thread
// together, its threads' involuntary context switches and run-queue wait so far.
struct Sched {
  std::int64_t cpu_ns = 0, invol = 0;
  std::optional<std::int64_t> wait_ns;
};
Sched sched_now() {
  Sched s;
  s.wait_ns = run_queue_wait_ns();
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
    if (before.wait_ns && after.wait_ns)
      s.wait_ns = std::max<std::int64_t>(0, *after.wait_ns - *before.wait_ns);
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
  parts.clock = cuda::make_clock_reader(device, stream);
  parts.monitor = cuda::make_gpu_monitor(device);
  parts.own_pid = static_cast<std::uint32_t>(getpid());
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

void refuse_shared_gpu(const core::Case& c) {
#ifdef ATTNPROF_HAVE_CUDA
  if (c.hardware.device.rfind("cuda", 0) != 0) return;
  const int device = std::max<int>(0, device_of(c).index());
  auto monitor = cuda::make_gpu_monitor(device);
  if (!monitor) return;
  // This worker's context on the device first: a list without it reads as one from another PID
  // namespace, in which one of the processes is this worker (gpu_monitor.h).
  {
    c10::cuda::CUDAGuard on(static_cast<c10::DeviceIndex>(device));
    if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {
      cudaGetLastError();  // not left for the next launch's check to report as its own
      throw util::EnvironmentError(fmt::format("cannot make a CUDA context on device {}: {}",
                                               device, cudaGetErrorString(e)));
    }
  }
  const measure::OtherProcesses others =
      measure::sharing_now(*monitor, static_cast<std::uint32_t>(getpid()), core::epoch_ns() / 1000);
  if (others.count > 0) throw measure::GpuSharedError(others);
#else
  (void)c;
#endif
}

}  // namespace attnprof::runner
