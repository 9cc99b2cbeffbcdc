// Correctness before speed: a kernel's output against its reference on the same inputs, with
// tolerances by dtype. The reference is the case's choice (Case::reference): sdpa.math by
// default, another kernel (the user's own module packaged in fp32, an op), run in fp32 where it
// supports fp32, or none (not checked, which every report says). A mismatch names the largest
// error and where it occurred.
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
  double mean_abs_error = 0;  // over the output's elements (a NaN counts as infinite)
  std::string message;        // on a mismatch: the largest error, the index (b, h, i, d) and values
};

// The reference output: `ref` (sdpa.math by default) on the inputs, fp32 copies of them when
// `fp32`.
at::Tensor reference_output(const kernel::Inputs& in);
at::Tensor reference_output(const kernel::Inputs& in, const kernel::Variant& ref, bool fp32);

// `level` other than kernel: `out` is a whole block's or layer's output, `reference` the
// harness's own (reference_workload). `against` names the reference in a mismatch's message
// ("aoti:mine-fp32.pt2 (fp32)"); empty: sdpa.math's (or the harness's block with it) in fp32.
CheckResult check_output(const at::Tensor& out, const at::Tensor& reference, core::DType dtype,
                         core::Level level = core::Level::kernel, std::string against = {});

// A case's reference, ready to run: the variant (null for "none"), and the case as it runs it,
// in fp32 where the reference supports fp32, else at the case's dtype.
struct Reference {
  std::string name;  // what CaseResult::reference records: "sdpa.math", "none", or the kernel
  core::Case spec;   // the case with the reference's kernel and dtype
  const kernel::Variant* variant = nullptr;
  bool fp32 = true;
};
// Looks the reference up and prepares it (a package is checked and loaded). Throws
// kernel::Unsupported, naming the reference, when it can run the case in no dtype.
Reference prepare_reference(const core::Case& c);
// `out` against the reference on the same inputs: the kernel's attention output, or with `whole`
// (a variant that replaces the workload) its whole block's or layer's; ok without a comparison
// when the reference is none.
CheckResult check_against(const Reference& r, const core::Case& c, const kernel::Inputs& in,
                          const at::Tensor& out, bool whole);

}  // namespace attnprof::runner
