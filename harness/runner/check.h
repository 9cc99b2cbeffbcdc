// Correctness before speed: a kernel's output against sdpa.math in fp32 on the same inputs,
// with tolerances by dtype. A mismatch names the largest error and where it occurred.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>

#include "harness/core/types.h"
#include "harness/kernel/registry.h"

namespace attnprof::runner {

struct Tolerance {
  double atol, rtol;
};
Tolerance tolerance_for(core::DType d);

struct CheckResult {
  bool ok = true;
  double max_abs_error = 0;
  std::string message;  // on a mismatch: the largest error, the index (b, h, i, d) and values
};

// The reference output: sdpa.math on fp32 copies of the inputs.
at::Tensor reference_output(const kernel::Inputs& in);

CheckResult check_output(const at::Tensor& out, const at::Tensor& reference, core::DType dtype);

}  // namespace attnprof::runner
