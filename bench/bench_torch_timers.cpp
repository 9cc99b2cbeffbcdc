// The GPU timer's modes against each other on the same calls (harness/measure/device_timer.h):
//   CUPTI vs events   one case timed with CUPTI durations (events as the cross-check): the
//                     median of events / CUPTI per sample ("measure.events_over_cupti")
//   graph vs cold     a short call timed in CUDA-graph batches and as single cold calls: the
//                     ratio of the two medians (warm replays run from a warm L2, so a ratio
//                     under 1 is expected where the call's data fits in the L2)
// over kernels of known length (spin_for: 5, 10, 50 and 200 us) and a small SDPA call. The
// modes run interleaved in rounds, so drift hits them alike. Without a GPU it says so and
// exits 0. Run: ninja -C build bench_torch_timers && build/bench/bench_torch_timers [rounds]
#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/measure/engine.h"
#include "worker/runner/timers.h"

#ifdef ATTNPROF_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/blocking.h"
#endif

using namespace attnprof;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#ifdef ATTNPROF_HAVE_CUDA
struct Timed {
  double median_ns = 0;
  std::map<std::string, double> metrics;
  std::vector<std::string> notes;
};

Timed time_call(const std::function<void()>& call, const runner::TimerOptions& options) {
  core::Case c;
  c.key = "bench/timers";
  c.hardware.device = "cuda:0";
  core::MeasureSettings s;
  s.warmup_ms = 20;
  s.min_samples = 30;
  s.max_samples = 300;
  s.time_budget_s = 1;
  auto timer = runner::make_timer(c, call, options);
  Timed t;
  t.median_ns = measure::run(*timer, s).summary.median_ns;
  timer->finish();
  t.metrics = timer->metrics();
  t.notes = timer->notes();
  return t;
}

double metric(const Timed& t, const std::string& name) {
  auto it = t.metrics.find(name);
  return it == t.metrics.end() ? 0 : it->second;
}
#endif

}  // namespace

int main(int argc, char** argv) {
#ifndef ATTNPROF_HAVE_CUDA
  (void)argc;
  (void)argv;
  fmt::print("built without CUDA: nothing to compare\n");
  return 0;
#else
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    fmt::print("no GPU: nothing to compare\n");
    return 0;
  }
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 2;
  struct Call {
    std::string name;
    std::function<void()> run;
  };
  std::vector<Call> calls;
  for (std::int64_t us : {5, 10, 50, 200})
    calls.push_back({fmt::format("spin {} us", us), [us] {
                       const auto s = kernels::cuda::spin_for(
                           us * 1000, at::cuda::getCurrentCUDAStream().stream());
                       if (!s.ok()) throw std::runtime_error(s.message);
                     }});
  const auto opts = at::TensorOptions().dtype(at::kHalf).device(at::kCUDA);
  const at::Tensor q = at::randn({1, 12, 128, 64}, opts), k = at::randn({1, 12, 128, 64}, opts),
                   v = at::randn({1, 12, 128, 64}, opts);
  calls.push_back(
      {"sdpa b1 h12 s128 d64 fp16", [&] { (void)at::scaled_dot_product_attention(q, k, v); }});

  runner::TimerOptions cupti_graph, cold;
  cold.graph_batching = false;
  fmt::print("{:<28} {:>12} {:>12} {:>10} {:>8} {:>12}\n", "call", "graph/CUPTI", "cold/CUPTI",
             "graph/cold", "batch K", "events/CUPTI");
  for (const auto& c : calls) {
    std::vector<double> graph_ns, cold_ns, ratio, events_over;
    double batch = 0;
    std::vector<std::string> notes;
    for (int r = 0; r < rounds; ++r) {
      const Timed g = time_call(c.run, cupti_graph);
      const Timed s = time_call(c.run, cold);
      graph_ns.push_back(g.median_ns);
      cold_ns.push_back(s.median_ns);
      if (s.median_ns > 0) ratio.push_back(g.median_ns / s.median_ns);
      if (metric(s, "measure.events_over_cupti") > 0)
        events_over.push_back(metric(s, "measure.events_over_cupti"));
      batch = metric(g, "measure.graph_batch");
      for (const auto* t : {&g, &s})
        for (const auto& n : t->notes)
          if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    }
    fmt::print("{:<28} {:>9.2f} us {:>9.2f} us {:>10.3f} {:>8.0f} {:>12.3f}\n", c.name,
               median(graph_ns) / 1e3, median(cold_ns) / 1e3, median(ratio), batch,
               median(events_over));
    for (const auto& n : notes) fmt::print("  note: {}\n", n);
  }
  return 0;
#endif
}
