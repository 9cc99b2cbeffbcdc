// Agreement and cost of attnprof's measurement, against a bare LibTorch loop timing the same
// call (issue 5). For each case, rounds alternate A (attnprof's runner: inputs, correctness
// check, warm-up, adaptive sampling; no traced pass) and B (a bare loop: the same SDPA call on
// the same inputs, steady_clock around each call, median of as many calls as A took). Printed:
// the ratio of A's median to B's per round, and the harness's wall time per sample beyond the
// timed calls themselves.
//
// Run on a quiet machine: build/bench/bench_torch_agreement [rounds]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "harness/scenario/scenario.h"
#include "worker/env/probe.h"
#include "worker/kernel/registry.h"
#include "worker/runner/runner.h"
#include "worker/runner/workload.h"

using namespace attnprof;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bare_loop_median(const core::Case& c, int calls) {
  c10::InferenceMode guard;
  kernel::Inputs in = runner::make_inputs(c);
  const kernel::Variant* v = kernel::registry().find(c.kernel);
  for (int i = 0; i < 5; ++i) v->launch(in);  // warm-up
  std::vector<double> t;
  for (int i = 0; i < calls; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    at::Tensor o = at::scaled_dot_product_attention(in.q, in.k, in.v, std::nullopt, 0.0,
                                                    c.mask == core::MaskKind::causal, in.scale);
    auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  return median(t);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const char* suite = R"(name: agreement
model: bert-base
hardware: {device: cpu}
measure: {warmup: 100ms, min_samples: 30, max_samples: 400, max_noise: 1%, time_budget: 4s}
workloads:
  - name: prefill
    batch: [1, 4]
    seq_len: [128, 512]
    mask: [none, causal]
    kernels: [sdpa.auto]
)";
  scenario::LoadOptions lo;
  lo.kernels = kernel::registry().names();
  auto cases = scenario::load_text(suite, "agreement.yaml", lo).cases;
  runner::Runner r(env::describe(), {.trace = false});
  fmt::print("threads {}; {} rounds per case, A = attnprof, B = bare loop\n", at::get_num_threads(),
             rounds);
  fmt::print("{:<48} {:>10} {:>10} {:>8} {:>8} {:>8} {:>12}\n", "case", "A median", "B median",
             "A/B med", "A/B min", "A/B max", "cost/sample");
  for (const auto& c : cases) {
    std::vector<double> ratios, a_med, b_med, overhead;
    for (int i = 0; i < rounds; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      core::CaseResult res = r.run(c);
      auto t1 = std::chrono::steady_clock::now();
      if (res.status != core::CaseStatus::ok) {
        fmt::print("{}: {}\n", c.key, res.message);
        return 1;
      }
      double timed = 0;
      for (const auto& s : res.samples) timed += double(s.ns);
      const int total_calls = int(res.samples.size()) + int(res.metrics["measure.warmup_calls"]);
      const double wall = std::chrono::duration<double, std::nano>(t1 - t0).count();
      // Harness cost per sample: wall time not spent inside timed calls (warm-up calls are
      // counted at the median), over the number of calls.
      overhead.push_back(
          (wall - timed - res.metrics["measure.warmup_calls"] * res.summary.median_ns) /
          std::max(1, total_calls));
      const double b = bare_loop_median(c, int(res.samples.size()));
      a_med.push_back(res.summary.median_ns);
      b_med.push_back(b);
      ratios.push_back(res.summary.median_ns / b);
    }
    fmt::print("{:<48} {:>8.1f}us {:>8.1f}us {:>8.4f} {:>8.4f} {:>8.4f} {:>10.1f}us\n", c.key,
               median(a_med) / 1e3, median(b_med) / 1e3, median(ratios),
               *std::min_element(ratios.begin(), ratios.end()),
               *std::max_element(ratios.begin(), ratios.end()), median(overhead) / 1e3);
  }
  return 0;
}
