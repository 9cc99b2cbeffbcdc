// costmatrix::render_summary: the lines under a case's cost matrix, exact text, each only when the
// case recorded its part.
#include <doctest/doctest.h>

#include "harness/core/metric_names.h"
#include "harness/costmatrix/summary.h"

using namespace attnprof;

TEST_SUITE("costmatrix::summary") {
  TEST_CASE("a CPU case: its ATen ops and backend, its errors, its memory over the calls") {
    core::CaseResult r;
    r.spec.hardware.device = "cpu";
    r.backend = "flash";
    r.kernels = std::vector<std::string>{"aten::_scaled_dot_product_flash_attention_for_cpu",
                                         "aten::scaled_dot_product_attention"};
    r.reference = "sdpa.math";
    r.max_abs_error = 4.77e-07;
    r.metrics[core::kMeanAbsErrorMetric] = 3.12e-08;
    r.metrics[core::kMemoryCallsMetric] = 412;
    r.metrics[core::kRssGrowthMetric] = 1.5 * (1 << 20);
    r.metrics[core::kMinorFaultsMetric] = 8448.25;
    r.metrics[core::kMajorFaultsMetric] = 0;
    CHECK(costmatrix::render_summary(r) ==
          "kernels   2 ATen op(s): aten::_scaled_dot_product_flash_attention_for_cpu, "
          "aten::scaled_dot_product_attention (backend flash)\n"
          "accuracy  max abs error 4.77e-07, mean abs error 3.12e-08 against sdpa.math\n"
          "memory    over 412 calls: resident set +1.50 MiB; 8448.25 minor and 0.00 major page "
          "faults per call\n");
    // Within a width: each part wrapped under its label.
    CHECK(costmatrix::render_summary(r, 60) ==
          "kernels   2 ATen op(s):\n"
          "          aten::_scaled_dot_product_flash_attention_for_cpu,\n"
          "          aten::scaled_dot_product_attention (backend flash)\n"
          "accuracy  max abs error 4.77e-07, mean abs error 3.12e-08\n"
          "          against sdpa.math\n"
          "memory    over 412 calls: resident set +1.50 MiB; 8448.25\n"
          "          minor and 0.00 major page faults per call\n");
  }

  TEST_CASE("a GPU case: its kernels and the CUDA allocator; unrecorded parts are left out") {
    core::CaseResult r;
    r.spec.hardware.device = "cuda";
    r.kernels = std::vector<std::string>{"flash_fwd_kernel"};
    r.metrics[core::kMemoryCallsMetric] = 30;
    r.metrics[core::kReservedPeakMetric] = 24 << 20;
    r.metrics[core::kAllocatedPeakMetric] = 18 << 20;
    r.metrics[core::kReservedRatioMetric] = 24.0 / 18;
    r.metrics[core::kAllocRetriesMetric] = 0;
    r.metrics[core::kSegmentsMetric] = 3;
    CHECK(costmatrix::render_summary(r) ==
          "kernels   1 kernel(s): flash_fwd_kernel\n"
          "memory    CUDA allocator over 30 calls: reserved peak 24.00 MiB, allocated peak "
          "18.00 MiB (1.33x), 0 retries, 3 segments\n");
    r.kernels.reset();
    r.metrics.clear();
    CHECK(costmatrix::render_summary(r) == "");
    r.backend = "cudnn";  // the backend alone: no traced pass, still what sdpa.auto chose
    CHECK(costmatrix::render_summary(r) ==
          "kernels   not recorded (no traced pass) (backend cudnn)\n");
  }
}
