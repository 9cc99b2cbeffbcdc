// Intra-op threads on CPUs of their own (thread_placement.h).
#include "worker/runner/thread_placement.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <string_view>

#include "harness/util/machine.h"

namespace attnprof::runner {
namespace {

// LibTorch's OpenMP runtime, as loaded with it: GOMP_parallel is the call g++ makes for
// `#pragma omp parallel` (libgomp's ABI since GCC 4.9; LLVM's and Intel's runtimes export it
// too). at::parallel_for cannot be used here: it is inline, and without -fopenmp in this file
// it runs serially; with -fopenmp the compiler's own libgomp would come in beside the one the
// torch wheel bundles, a second pool of threads. Looked up in the process, it is the runtime
// whose pool runs LibTorch's kernels, whatever its file is called.
struct OpenMp {
  void (*parallel)(void (*)(void*), void*, unsigned, unsigned) = nullptr;
  int (*thread_num)() = nullptr;
};

const OpenMp& loaded_openmp() {
  static const OpenMp omp = [] {
    OpenMp o;
    o.parallel = reinterpret_cast<decltype(o.parallel)>(dlsym(RTLD_DEFAULT, "GOMP_parallel"));
    o.thread_num =
        reinterpret_cast<decltype(o.thread_num)>(dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
    if (!o.parallel || !o.thread_num) o = {};
    return o;
  }();
  return omp;
}

// Runs f(i) on each intra-op thread i of a team as large as LibTorch's, the calling thread as
// thread 0; libgomp gives a team's thread i to the same pooled thread every time, so this is
// the thread that runs LibTorch's i-th chunk. Only the calling thread, as thread 0, where
// there is no OpenMP runtime to ask (LibTorch's native pool).
template <class F>
void on_each_intra_op_thread(F f) {
  const int n = at::get_num_threads();
  const OpenMp& omp = loaded_openmp();
  if (n <= 1 || !omp.parallel) {
    f(0);
    return;
  }
  struct Call {
    F* f;
    int (*thread_num)();
  } call{&f, omp.thread_num};
  omp.parallel(
      [](void* p) {
        auto* c = static_cast<Call*>(p);
        (*c->f)(c->thread_num());
      },
      &call, static_cast<unsigned>(n), 0);
}

}  // namespace

std::vector<int> cpu_order_from_env() {
  const char* text = std::getenv("ATTNPROF_CPU_ORDER");
  if (!text) return {};
  const std::vector<int> allowed = util::allowed_cpus();
  std::vector<int> out;
  std::string_view rest(text);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    int cpu = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), cpu);
    if (ec != std::errc() || end != item.data() + item.size() || cpu < 0) return {};
    if (std::find(allowed.begin(), allowed.end(), cpu) != allowed.end() &&
        std::find(out.begin(), out.end(), cpu) == out.end())
      out.push_back(cpu);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return out;
}

int place_intra_op_threads(const std::vector<int>& order) {
  if (order.empty()) return 0;
  const std::vector<int> before = util::allowed_cpus();
  std::atomic<int> bound = 0;
  on_each_intra_op_thread([&](int i) {
    if (util::pin_thread(0, {order[static_cast<std::size_t>(i) % order.size()]})) ++bound;
  });
  util::pin_thread(0, before);
  return bound;
}

void free_intra_op_threads(const std::vector<int>& cpus) {
  on_each_intra_op_thread([&](int) { util::pin_thread(0, cpus); });
}

CallingThreadOn::CallingThreadOn(int cpu) {
  if (cpu < 0) return;
  m_before = util::allowed_cpus();
  if (!util::pin_thread(0, {cpu})) m_before.clear();
}

CallingThreadOn::~CallingThreadOn() {
  if (!m_before.empty()) util::pin_thread(0, m_before);
}

}  // namespace attnprof::runner
