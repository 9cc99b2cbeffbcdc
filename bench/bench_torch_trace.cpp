// Overhead of the traced pass (trace::record: RecordFunction callbacks with shapes, memory
// reporting) against the same call untraced, on the CPU, for a small SDPA and an eager attention
// (matmul, softmax, matmul). Run: ninja -C build bench_torch_trace && build/bench/bench_torch_trace
// Prints the median CPU time per call of each (one intra-op thread, so the calling thread does
// all the work) and the ratio; also how many ops one pass records.
// printf, not fmt: LibTorch's include dir carries its own fmt (v12) headers, which shadow the
// system fmt that attnprof links in any translation unit that includes LibTorch.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "harness/costmatrix/cost_matrix.h"
#include "harness/trace/tracer.h"
#include "harness/util/allocator.h"

using namespace attnprof;

namespace {

// The calling thread's CPU time of one call. With one intra-op thread the body and the tracer
// both run on this thread, so this is the work a pass costs; on a shared machine, wall time
// mostly measures the other processes.
double time_ns(const std::function<void()>& f) {
  timespec a{}, b{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  f();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return double(b.tv_sec - a.tv_sec) * 1e9 + double(b.tv_nsec - a.tv_nsec);
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// The floor under any RecordFunction-based tracer (ours, torch.profiler): LibTorch builds a
// RecordFunction for every op once any global callback is installed, even one that does nothing.
std::unique_ptr<at::ObserverContext> empty_enter(const at::RecordFunction&) { return nullptr; }
void empty_exit(const at::RecordFunction&, at::ObserverContext*) {}

// needs_inputs: LibTorch then boxes every op's arguments into IValues for the callback (what
// recording input shapes costs before the tracer looks at them).
double with_empty_callback(const std::function<void()>& calls, bool needs_inputs) {
  const auto handle = at::addGlobalCallback(
      at::RecordFunctionCallback(&empty_enter, &empty_exit)
          .needsInputs(needs_inputs)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
  const double ns = time_ns(calls);
  at::removeCallback(handle);
  return ns;
}

// The variants run interleaved (plain, then each traced form, then again), so drift on a shared
// machine hits all of them alike. Two traced forms: the pass attnprof runs (`trace_calls`, 10
// warm calls recorded in one session, then the cost matrix), per call; and a single call in its
// own session (plain record()), which also pays the session's set-up and the merge of the
// buffers once for one call.
// Only the passes whose name contains this (the first argument), e.g. "eager" for a profile.
std::string g_only;

void compare(const char* name, const std::function<void()>& call, int reps) {
  if (std::string(name).find(g_only) == std::string::npos) return;
  constexpr int pass_calls = 10;  // measure.trace_calls' default
  for (int i = 0; i < 20; ++i) call();  // warm up
  trace::Options one, pass, pass_nomem;
  pass.calls = pass_nomem.calls = pass_calls;
  pass_nomem.memory = false;
  std::size_t ops = 0;
  std::vector<double> plain, empty, empty_inputs, traced_pass, traced_pass_nomem, traced_one;
  const auto calls = [&] {
    for (int c = 0; c < pass_calls; ++c) call();
  };
  for (int i = 0; i < reps; ++i) {
    plain.push_back(time_ns(calls) / pass_calls);
    empty.push_back(with_empty_callback(calls, false) / pass_calls);
    empty_inputs.push_back(with_empty_callback(calls, true) / pass_calls);
    traced_pass.push_back(time_ns([&] {
                            const trace::Trace t = trace::record(call, pass);
                            ops = t.ops.size() / pass_calls;
                            (void)costmatrix::build(t);
                          }) /
                          pass_calls);
    traced_pass_nomem.push_back(
        time_ns([&] { (void)costmatrix::build(trace::record(call, pass_nomem)); }) / pass_calls);
    traced_one.push_back(time_ns([&] { (void)trace::record(call, one); }));
  }
  const double p = median(plain), e = median(empty), ei = median(empty_inputs), t = median(traced_pass),
               n = median(traced_pass_nomem), o = median(traced_one);
  std::printf(
      "%-26s untraced %9.1f us  empty callback %.3fx, with inputs %.3fx  traced pass %9.1f us/call (%.3fx; "
      "%.3fx of empty)  no-memory %.3fx  single-call record %.3fx  %zu ops/call, %.2f us/op\n",
      name, p / 1e3, e / p, ei / p, t / 1e3, t / p, t / e, n / p, o / p, ops,
      ops ? (t - p) / 1e3 / double(ops) : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_only = argv[1];
  // The allocator as attnprof-worker sets it: otherwise a traced pass's freed buffers trim the
  // heap and the next call's temporaries fault their pages in again, a cost users never see.
  util::keep_freed_memory();
  at::set_num_threads(1);
  at::manual_seed(0);
  std::printf(
      "intra-op threads: %d; medians of the calling thread's CPU time, interleaved passes\n",
      at::get_num_threads());
  for (auto [b, h, s, d] : {std::array<int, 4>{1, 8, 128, 64}, std::array<int, 4>{1, 8, 512, 64}}) {
    const auto q = at::randn({b, h, s, d}), k = at::randn({b, h, s, d}),
               v = at::randn({b, h, s, d});
    const double scale = 1.0 / std::sqrt(double(d));
    const std::string shape = "b" + std::to_string(b) + " h" + std::to_string(h) + " s" +
                              std::to_string(s) + " d" + std::to_string(d);
    compare(("sdpa " + shape).c_str(), [&] { (void)at::scaled_dot_product_attention(q, k, v); },
            s > 256 ? 10 : 60);
    compare(
        ("eager " + shape).c_str(),
        [&] { (void)at::matmul(at::softmax(at::matmul(q, k.transpose(-2, -1)) * scale, -1), v); },
        s > 256 ? 10 : 60);
  }
  // The tracer's own cost per op, with ops too small to vary: 36 in-place adds on a one-element
  // tensor (as many ops as the eager pass above records), no allocation.
  const auto one = at::zeros({1});
  compare(
      "36 tiny ops (per-op cost)",
      [&] {
        for (int i = 0; i < 36; ++i) one.add_(1);
      },
      400);
  return 0;
}
