// The traced pass (worker/runner/traced_pass.h) on the CPU: a pass whose calls ran in another
// state of the machine than the timed samples is traced again; where no pass agrees, the
// nearest is kept, and trace.call_over_median says how far it is. Each pass comes after as many
// untraced calls, and trace.overhead is the kept pass's median call over theirs. A pass of 4
// timed calls runs the body 10 times: 4 untraced, then the tracer's warm-up call, the 4 timed
// calls and the call that records shapes and memory.
#include <chrono>
#include <thread>

#include "tests/torch/torch_doctest.h"
#include "worker/env/probe.h"
#include "worker/runner/traced_pass.h"

using namespace attnprof;

namespace {

core::Case cpu_case() {
  core::Case c;
  c.key = "test/traced";
  c.kernel = "eager";
  c.model = {"tiny", 2, 2, 16, 32, 64, 0, 0, "layernorm"};
  c.batch = 1;
  c.q_len = c.kv_len = 8;
  c.measure.trace_calls = 4;
  return c;
}

// A workload whose calls sleep `slow_ms` until `slow_calls` calls have run, then `fast_ms`.
std::function<at::Tensor()> work(int slow_calls, int slow_ms, int fast_ms, int& calls) {
  return [=, &calls] {
    RECORD_USER_SCOPE("attnprof::eager");
    const int ms = calls++ < slow_calls ? slow_ms : fast_ms;
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return at::zeros({1});
  };
}

// A CPU case whose timed samples had this median, traced over `work`.
core::CaseResult traced(double median_ns, const std::function<at::Tensor()>& work) {
  core::CaseResult r;
  r.spec = cpu_case();
  r.summary.median_ns = median_ns;
  runner::traced_pass(r.spec, env::describe(), work, r);
  return r;
}

}  // namespace

TEST_SUITE("runner::traced_pass") {
  TEST_CASE("a pass in another state of the machine than the samples is traced again") {
    // The samples' median is 40 ms; the untraced call and the first pass's 10 calls take 100 ms
    // each, as if the machine had turned slow after the samples. Long sleeps, so that a busy
    // machine's late wake-ups stay far inside the 1.25x band.
    int calls = 0;
    const auto r = traced(40e6, work(11, 100, 40, calls));
    CHECK(calls == 1 + 10 + 10);
    CHECK(r.metrics.at("trace.passes") == 2);
    CHECK(r.message.empty());
    CHECK(r.metrics.at("trace.call_cpu_ns") == doctest::Approx(40e6).epsilon(0.5));
  }

  TEST_CASE("a pass that agrees is the only one") {
    int calls = 0;
    const auto r = traced(40e6, work(0, 0, 40, calls));
    CHECK(calls == 1 + 10);
    CHECK(r.metrics.at("trace.passes") == 1);
    // The untraced calls and the traced ones take the same 40 ms.
    CHECK(r.metrics.at("trace.overhead") == doctest::Approx(1).epsilon(0.2));
  }

  TEST_CASE("trace.overhead is the pass's median call over the untraced calls just before it") {
    // The untraced calls take 30 ms, the pass's calls 90 ms: as if the tracer tripled them. The
    // samples' median is 90 ms, so the pass agrees with it and there is one. A busy machine's
    // late wake-ups (a few ms) stay inside the margin.
    int calls = 0;
    const auto r = traced(90e6, [&calls] {
      RECORD_USER_SCOPE("attnprof::eager");
      const int call = calls++;
      std::this_thread::sleep_for(std::chrono::milliseconds(call >= 1 && call < 5 ? 30 : 90));
      return at::zeros({1});
    });
    CHECK(calls == 1 + 10);
    CHECK(r.metrics.at("trace.passes") == 1);
    CHECK(r.metrics.at("trace.overhead") == doctest::Approx(3).epsilon(0.3));
    CHECK(r.metrics.at("trace.call_over_median") == doctest::Approx(1).epsilon(0.2));
  }

  TEST_CASE("no pass agrees: the nearest is kept, and a metric says how far") {
    int calls = 0;
    // Passes of 80 ms, 80 ms and 40 ms calls: the third is the nearest to the 10 ms median.
    const auto r = traced(10e6, work(21, 80, 40, calls));
    CHECK(calls == 1 + 3 * 10);
    CHECK(r.metrics.at("trace.passes") == 3);
    CHECK(r.metrics.at("trace.call_cpu_ns") == doctest::Approx(40e6).epsilon(0.5));
    CHECK(r.metrics.at("trace.call_over_median") == doctest::Approx(4).epsilon(0.5));
    // The kept pass's own untraced calls ran at its 40 ms too.
    CHECK(r.metrics.at("trace.overhead") == doctest::Approx(1).epsilon(0.2));
    CHECK(r.message.empty());
  }
}
