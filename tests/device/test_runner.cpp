// The runner on a GPU, end to end for what the timer's unit tests cannot show: a block case
// (QKV projection, attention, output projection: cuBLAS handles and workspaces, allocator growth
// on its first calls) measured behind the blocking kernel without the kernel timing out. Skips
// (passes with a message) where there is no GPU.
#include "harness/scenario/scenario.h"
#include "tests/device/device_test.h"
#include "tests/torch/torch_doctest.h"
#include "worker/env/probe.h"
#include "worker/kernel/registry.h"
#include "worker/runner/runner.h"

using namespace attnprof;

namespace {

core::Case block_case(const std::string& kernel) {
  const std::string yaml = R"(name: device-block
model: bert-base
hardware: {device: cuda}
dtype: fp16
measure: {warmup: 20ms, min_samples: 10, max_samples: 100, time_budget: 2s}
workloads:
  - name: prefill
    level: block
    batch: 1
    seq_len: 128
    kernels: [)" + kernel + "]\n";
  scenario::LoadOptions lo;
  lo.kernels = kernel::registry().names();
  auto suite = scenario::load_text(yaml, "device-block.yaml", lo);
  REQUIRE(suite.cases.size() == 1);
  return suite.cases[0];
}

}  // namespace

TEST_SUITE("runner::Runner on a GPU") {
  TEST_CASE("device: a block case's first calls do not stall behind the blocking kernel") {
    if (!device_test::have_gpu()) return;
    runner::Runner r(env::describe(), {.trace = false});
    for (const char* kernel : {"eager", "sdpa.math"}) {
      CAPTURE(kernel);
      const core::CaseResult res = r.run(block_case(kernel));
      MESSAGE(kernel << ": " << core::to_string(res.status) << " " << res.message);
      REQUIRE(res.status == core::CaseStatus::ok);
      CHECK(res.metrics.at("measure.blocking_kernel") == 1);
      CHECK(res.message.find("blocking kernel timed out") == std::string::npos);
      CHECK(res.summary.n > 0);
    }
  }
}
