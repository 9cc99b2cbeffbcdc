// Overhead of the traced pass (trace::record: RecordFunction callbacks, shapes, memory
// reporting) against the same call untraced, on the CPU, for a small SDPA and an eager attention
// (matmul, softmax, matmul). Run: ninja -C build bench_torch_trace && build/bench/bench_torch_trace
// [NAME-PART] [--per-op]
// Prints the median CPU time per call of each (one intra-op thread, so the calling thread does
// all the work) and the ratio, beside two floors (an empty callback, a minimal tracer); also how
// many ops one pass records.
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
#include <random>
#include <string>
#include <vector>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "harness/costmatrix/cost_matrix.h"
#include "harness/util/allocator.h"
#include "worker/trace/tracer.h"

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

// The least a tracer that records names, nesting and times can do per op: one thread, a fixed
// array, the name's pointer kept (not its text), two clock reads (the TSC, as the tracer reads
// it). Not usable (it keeps no names past the op and breaks with threads): only the measure of
// what the real tracer adds above what any such tracer costs.
std::uint64_t ticks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}
struct MinimalOp {
  std::uint64_t start = 0, end = 0;
  const char* name = nullptr;
  std::int64_t parent = -1;
};
MinimalOp g_minimal[4096];
int g_minimal_n = 0;
int g_minimal_stack[64];
int g_minimal_depth = 0;
std::unique_ptr<at::ObserverContext> minimal_enter(const at::RecordFunction& fn) {
  const int i = g_minimal_n++ & 4095;
  MinimalOp& op = g_minimal[i];
  op.name = fn.name();
  op.parent = g_minimal_depth > 0 ? g_minimal_stack[g_minimal_depth - 1] : -1;
  g_minimal_stack[g_minimal_depth++ & 63] = i;
  op.start = ticks();
  return nullptr;
}
void minimal_exit(const at::RecordFunction&, at::ObserverContext*) {
  const std::uint64_t t = ticks();
  if (g_minimal_depth > 0) g_minimal[g_minimal_stack[--g_minimal_depth]].end = t;
}

void with_callback(const std::function<void()>& calls,
                   at::RecordFunctionCallback::StartCallback enter,
                   at::RecordFunctionCallback::EndCallback exit) {
  g_minimal_n = g_minimal_depth = 0;
  const auto handle = at::addGlobalCallback(
      at::RecordFunctionCallback(enter, exit)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
  calls();
  at::removeCallback(handle);
}

// The variants (untraced, empty callback, minimal tracer, traced) run interleaved, in a new
// shuffled order each rep, so drift on a shared machine falls on all of them alike and no
// variant always follows the same one. Each variant starts after 3 untraced calls that are not
// counted: what the one before it left behind (a traced pass's merge evicts the caches) is
// gone before its first counted call, whichever came before. The pass attnprof runs is
// trace::record with calls = 10 (measure.trace_calls' default): one warm-up call, traced and
// dropped, the 10 timed calls, then one call that records shapes and memory, then the merge;
// then costmatrix::build. Every variant runs the body through the same wrapper, which times
// each call alone, and counts 10 calls (the untraced ones leave out their last, as the traced
// pass leaves out its warm-up and description calls), so timing a call costs all of them alike.
// Figures, medians over all calls:
// - traced calls: the timed calls inside the traced pass against untraced calls. This is what
//   the tracer adds to the times the cost matrix reports (the target: within 5%).
// - empty callback and minimal tracer: the floors under it, what LibTorch's RecordFunction costs
//   with any callback and what any tracer of names, nesting and times costs above that.
// - us/call in its callbacks: the tracer's own time as it measures it itself (see below); the
//   rest of "traced calls" above the minimal tracer is what its callbacks cost the ops around
//   them (caches).
// - whole pass: everything record() and costmatrix::build() cost, per timed call, against 10
//   untraced calls (the warm-up and description calls included, so at least 1.2x): what a
//   traced pass costs the run in time.
// Only the passes whose name contains this (the first argument), e.g. "eager" for a profile.
std::string g_only;
// --per-op: also each op's median duration under the minimal tracer and under the real one, side
// by side (see per_op_table): where the traced calls' extra time lies, op by op.
bool g_per_op = false;
double g_ns_per_tick = 1;  // ticks() in nanoseconds, measured at start

// One op's durations (ns) across calls, by its place in the call (the k-th op entered).
using PerOp = std::vector<std::vector<double>>;

void add_call_ops(PerOp& table, std::size_t k, double ns) {
  if (table.size() <= k) table.resize(k + 1);
  table[k].push_back(ns);
}

// The minimal tracer's ops of one variant run (pass_calls + 1 calls, the last left out), by
// place; false where the calls did not all run the same number of ops.
bool take_minimal_ops(PerOp& table, std::vector<std::string>& names, int pass_calls) {
  const int calls = pass_calls + 1;
  if (g_minimal_n > 4096 || g_minimal_n % calls != 0) return false;
  const int per_call = g_minimal_n / calls;
  names.resize(std::max(names.size(), static_cast<std::size_t>(per_call)));
  for (int c = 0; c < pass_calls; ++c)
    for (int k = 0; k < per_call; ++k) {
      const MinimalOp& op = g_minimal[c * per_call + k];
      add_call_ops(table, k, op.end > op.start ? double(op.end - op.start) * g_ns_per_tick : 0);
      names[k] = std::string(op.parent < 0 ? "" : "  ") + op.name;
    }
  return true;
}

// The real tracer's timed ops, by place; false where the calls ran different numbers of ops.
bool take_traced_ops(PerOp& table, PerOp& own, const trace::Trace& t) {
  const std::size_t calls = t.call_starts.size();
  if (calls == 0 || t.ops.size() % calls != 0) return false;
  const std::size_t per_call = t.ops.size() / calls;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const trace::OpEvent& op = t.ops[i];
    add_call_ops(table, i % per_call,
                 op.end_ns > op.start_ns ? double(op.end_ns - op.start_ns) : 0);
    add_call_ops(own, i % per_call, double(op.tracer_ns));
  }
  return true;
}

void compare(const char* name, const std::function<void()>& call, int reps) {
  if (std::string(name).find(g_only) == std::string::npos) return;
  constexpr int pass_calls = 10;  // measure.trace_calls' default
  for (int i = 0; i < 20; ++i) call();  // warm up
  trace::Options pass;
  pass.calls = pass_calls;
  std::size_t ops = 0;
  std::vector<double> plain, empty, minimal, traced, plain_pass, whole, own;
  PerOp minimal_ops, traced_ops, traced_own;
  std::vector<std::string> names;
  bool per_op = g_per_op;
  // The body every variant runs: each call timed alone, the last left out.
  int n = 0;
  std::vector<double>* into = nullptr;
  const std::function<void()> body = [&] {
    const double ns = time_ns(call);
    const int i = n++;
    if (i >= 0 && i < pass_calls) into->push_back(ns);
  };
  const auto untraced = [&] {
    for (int c = 0; c <= pass_calls; ++c) body();
  };
  const std::function<void()> variants[] = {
      [&] {
        into = &plain;
        plain_pass.push_back(time_ns(untraced));
      },
      [&] {
        into = &empty;
        with_callback(untraced, &empty_enter, &empty_exit);
      },
      [&] {
        into = &minimal;
        with_callback(untraced, &minimal_enter, &minimal_exit);
        if (per_op) per_op = take_minimal_ops(minimal_ops, names, pass_calls);
      },
      [&] {
        into = &traced;
        n = -pass.warmup_calls;  // the traced pass's warm-up calls are not its timed calls
        whole.push_back(time_ns([&] {
          const trace::Trace t = trace::record(body, pass);
          ops = t.ops.size() / pass_calls;
          // The tracer's own time as it measures it (OpEvent::tracer_ns): its callbacks inside
          // the top-level ops, so all but the top-level ops' own two callbacks.
          double ns = 0;
          for (const trace::OpEvent& op : t.ops)
            if (op.parent < 0) ns += double(op.tracer_ns);
          own.push_back(ns / pass_calls);
          if (per_op) per_op = take_traced_ops(traced_ops, traced_own, t);
          (void)costmatrix::build(t);
        }));
      }};
  std::mt19937 shuffle(0x5eed);
  int order[] = {0, 1, 2, 3};
  for (int i = 0; i < reps; ++i) {
    std::shuffle(std::begin(order), std::end(order), shuffle);
    for (int v : order) {
      for (int c = 0; c < 3; ++c) call();  // settle
      n = 0;
      variants[v]();
    }
  }
  const double p = median(plain), t = median(traced);
  std::printf(
      "%-26s untraced %8.1f us  empty callback %.3fx  minimal tracer %.3fx  traced calls %.3fx "
      "(%.2f us/op, %.2f us/call in its callbacks)  whole pass %.3fx  %zu ops/call\n",
      name, p / 1e3, median(empty) / p, median(minimal) / p, t / p,
      ops ? (t - p) / 1e3 / double(ops) : 0.0, median(own) / 1e3,
      median(whole) / median(plain_pass) * (pass_calls + 1) / pass_calls, ops);
  if (g_per_op && !(per_op && minimal_ops.size() == traced_ops.size())) {
    std::printf("  (per op: the calls ran different ops, nothing to set side by side)\n");
  } else if (g_per_op) {
    // Medians by place in the call; nested ops indented. The tracer's own time inside an op is
    // its callbacks of the op's descendants (OpEvent::tracer_ns); the rest of the difference is
    // what tracing costs the op's own work.
    std::printf("  %-30s %12s %12s %10s %10s\n", "op (by place in the call)", "minimal ns",
                "traced ns", "own ns", "traced-min");
    double top_minimal = 0, top_traced = 0;
    for (std::size_t k = 0; k < traced_ops.size(); ++k) {
      const double a = median(minimal_ops[k]), b = median(traced_ops[k]);
      std::printf("  %-30s %12.0f %12.0f %10.0f %+10.0f\n", names[k].c_str(), a, b,
                  median(traced_own[k]), b - a);
      if (names[k].rfind("  ", 0) != 0) top_minimal += a, top_traced += b;
    }
    std::printf("  %-30s %12.0f %12.0f %10s %+10.0f\n", "top-level ops", top_minimal, top_traced,
                "", top_traced - top_minimal);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--per-op")
      g_per_op = true;
    else
      g_only = argv[i];
  }
  {
    // The TSC's rate, for the minimal tracer's durations: ticks over 100 ms of the steady clock.
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t k0 = ticks();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(100)) {
    }
    const std::uint64_t k1 = ticks();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
    g_ns_per_tick = k1 > k0 ? double(ns) / double(k1 - k0) : 1.0;
  }
  // The allocator as attnprof-worker sets it: otherwise a traced pass's freed buffers trim the
  // heap and the next call's temporaries fault their pages in again, a cost users never see.
  util::keep_freed_memory();
  at::set_num_threads(1);
  at::manual_seed(0);
  std::printf(
      "intra-op threads: %d; medians of the calling thread's CPU time, interleaved passes\n",
      at::get_num_threads());
  // 8 heads at s128: the smallest eager call here, where the tracer's per-op cost weighs most;
  // 12 heads at s128: BERT-base, the smallest eager case of the built-in smoke suite.
  for (auto [b, h, s, d] : {std::array<int, 4>{1, 8, 128, 64}, std::array<int, 4>{1, 12, 128, 64},
                            std::array<int, 4>{1, 8, 512, 64}}) {
    const auto q = at::randn({b, h, s, d}), k = at::randn({b, h, s, d}),
               v = at::randn({b, h, s, d});
    const double scale = 1.0 / std::sqrt(double(d));
    const std::string shape = "b" + std::to_string(b) + " h" + std::to_string(h) + " s" +
                              std::to_string(s) + " d" + std::to_string(d);
    compare(("sdpa " + shape).c_str(), [&] { (void)at::scaled_dot_product_attention(q, k, v); },
            s > 256 ? 21 : 60);
    compare(
        ("eager " + shape).c_str(),
        [&] { (void)at::matmul(at::softmax(at::matmul(q, k.transpose(-2, -1)) * scale, -1), v); },
        s > 256 ? 21 : 60);
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
