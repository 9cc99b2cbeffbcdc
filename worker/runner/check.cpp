// A kernel's output against the fp32 reference (check.h): the reference itself, sdpa.math on
// fp32 copies of the inputs, and the comparison with its tolerances by dtype.
#include "worker/runner/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "worker/kernel/registry.h"

namespace attnprof::runner {

Tolerance tolerance_for(core::DType d, core::Level level) {
  // fp16 keeps 11 significant bits, bf16 8; fp32 kernels may still reorder sums (tiling,
  // online softmax), hence not 0.
  Tolerance t = d == core::DType::fp16   ? Tolerance{2e-3, 2e-3}
                : d == core::DType::bf16 ? Tolerance{1.6e-2, 1.6e-2}
                                         : Tolerance{1e-4, 1e-4};
  const double widen = level == core::Level::kernel ? 1 : level == core::Level::block ? 2 : 4;
  return {t.atol * widen, t.rtol * widen};
}

at::Tensor reference_output(const kernel::Inputs& in) {
  const kernel::Variant* math = kernel::registry().find("sdpa.math");
  kernel::Inputs ref = in;
  ref.q = in.q.to(at::kFloat);
  ref.k = in.k.to(at::kFloat);
  ref.v = in.v.to(at::kFloat);
  // An additive (custom) mask must match the query's dtype or be bool; a bool mask stays bool.
  if (ref.mask.defined() && ref.mask.scalar_type() != at::kBool) ref.mask = ref.mask.to(at::kFloat);
  return math->launch(ref);
}

CheckResult check_output(const at::Tensor& out, const at::Tensor& reference, core::DType dtype,
                         core::Level level) {
  CheckResult r;
  if (out.sizes() != reference.sizes()) {
    r.ok = false;
    r.message = fmt::format("output shape {} differs from the reference's {}",
                            fmt::join(out.sizes(), "x"), fmt::join(reference.sizes(), "x"));
    return r;
  }
  const Tolerance tol = tolerance_for(dtype, level);
  at::Tensor o = out.to(at::kFloat).cpu(), ref = reference.to(at::kFloat).cpu();
  at::Tensor err = (o - ref).abs();
  // NaN anywhere in the output is a mismatch however small the other errors are.
  err = at::where(at::isnan(o), at::full_like(err, std::numeric_limits<float>::infinity()), err);
  at::Tensor excess = err - (tol.atol + tol.rtol * ref.abs());
  const int64_t worst = excess.flatten().argmax().item<int64_t>();
  r.max_abs_error = err.max().item<double>();
  if (excess.flatten()[worst].item<double>() > 0) {
    r.ok = false;
    std::vector<int64_t> idx(o.dim());
    int64_t rest = worst;
    for (int64_t d = o.dim() - 1; d >= 0; --d) {
      idx[d] = rest % o.size(d);
      rest /= o.size(d);
    }
    r.message = fmt::format(
        "{} differs from {} (fp32): max abs error {:.3g} at [{}] (got {:.6g}, "
        "expected {:.6g}; tolerance atol {:g} + rtol {:g})",
        level == core::Level::kernel ? "output" : fmt::format("{} output", core::to_string(level)),
        level == core::Level::kernel
            ? "sdpa.math"
            : fmt::format("the harness's {} with sdpa.math", core::to_string(level)),
        r.max_abs_error, fmt::join(idx, ", "), o.flatten()[worst].item<double>(),
        ref.flatten()[worst].item<double>(), tol.atol, tol.rtol);
  }
  return r;
}

}  // namespace attnprof::runner
