// Correctness before speed: a kernel's output against sdpa.math in fp32 on the same inputs,
// with tolerances by dtype. A mismatch names the largest error and where it occurred.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>

#include "harness/core/types.h"
#include "worker/kernel/registry.h"

namespace attnprof::runner {

struct Tolerance {
  double atol, rtol;
};
// By dtype, for a kernel's output; a whole block or layer (a variant that replaces the
// workload, checked against reference_workload) rounds at more points in a row (the QKV and
// output projections, the norms, the MLP), so its tolerance is wider: twice for a block, four
// times for a layer.
Tolerance tolerance_for(core::DType d, core::Level level = core::Level::kernel);

struct CheckResult {
  bool ok = true;
  double max_abs_error = 0;
  std::string message;  // on a mismatch: the largest error, the index (b, h, i, d) and values
};

// The reference output: sdpa.math on fp32 copies of the inputs.
at::Tensor reference_output(const kernel::Inputs& in);

// `level` other than kernel: `out` is a whole block's or layer's output, `reference` the
// harness's own (reference_workload).
CheckResult check_output(const at::Tensor& out, const at::Tensor& reference, core::DType dtype,
                         core::Level level = core::Level::kernel);

}  // namespace attnprof::runner
