// A kernel's output against its reference (check.h): the reference itself (sdpa.math, or the
// case's choice, on fp32 copies of the inputs where it runs in fp32) and the comparison with its
// tolerances by dtype.
#include "worker/runner/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "worker/kernel/plugin.h"
#include "worker/kernel/registry.h"
#include "worker/kernel/variants/variants.h"
#include "worker/runner/workload.h"

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
  return reference_output(in, *kernel::registry().find("sdpa.math"), true);
}

at::Tensor reference_output(const kernel::Inputs& in, const kernel::Variant& ref, bool fp32) {
  kernel::Inputs r = in;
  if (fp32) {
    r.q = in.q.to(at::kFloat);
    r.k = in.k.to(at::kFloat);
    r.v = in.v.to(at::kFloat);
    // An additive (custom) mask must match the query's dtype or be bool; a bool mask stays bool.
    if (r.mask.defined() && r.mask.scalar_type() != at::kBool) r.mask = r.mask.to(at::kFloat);
  }
  return ref.launch(r);
}

Reference prepare_reference(const core::Case& c) {
  Reference r;
  // sdpa.math by default; eager where sdpa.math cannot compute the case's score modifier.
  r.name = !c.reference.empty()                                          ? c.reference
           : kernel::unsupported(*kernel::registry().find("sdpa.math"), c) ? "eager"
                                                                          : "sdpa.math";
  if (r.name == "none") return r;
  std::string why;
  r.variant = kernel::lookup(r.name, &why);
  if (!r.variant) throw std::runtime_error(fmt::format("reference \"{}\": {}", r.name, why));
  r.spec = c;
  r.spec.kernel = r.name;
  r.spec.kernel_args = c.reference_args;
  r.spec.reference.clear();
  // fp32 first (the same algorithm in higher precision is the reference), then the case's own.
  std::string last;
  for (const core::DType d : {core::DType::fp32, c.dtype}) {
    r.spec.dtype = d;
    r.fp32 = d == core::DType::fp32;
    if (auto no = kernel::unsupported(*r.variant, r.spec)) {
      last = *no;
    } else {
      try {
        if (r.variant->prepare) r.variant->prepare(r.spec);
        return r;
      } catch (const kernel::Unsupported& e) {
        last = e.what();
      }
    }
    if (c.dtype == core::DType::fp32) break;
  }
  throw kernel::Unsupported(
      fmt::format("reference {} cannot check this case (so it is not timed): {}", r.name, last));
}

CheckResult check_against(const Reference& r, const core::Case& c, const kernel::Inputs& in,
                          const at::Tensor& out, bool whole) {
  if (!r.variant) return {};
  const std::string dtype = core::to_string(r.spec.dtype);
  kernel::Inputs rin = in;
  rin.spec = &r.spec;
  if (!whole)
    return check_output(out, reference_output(rin, *r.variant, r.fp32), c.dtype,
                        core::Level::kernel, fmt::format("{} ({})", r.name, dtype));
  const bool own = kernel::replaces_workload(c, *r.variant);  // a package of the whole block
  const std::string against =
      own ? fmt::format("{} ({})", r.name, dtype)
          : fmt::format("the harness's {} with {} ({})", core::to_string(c.level), r.name, dtype);
  return check_output(out, reference_workload(c, rin, *r.variant, r.fp32), c.dtype, c.level,
                      against);
}

CheckResult check_output(const at::Tensor& out, const at::Tensor& reference, core::DType dtype,
                         core::Level level, std::string against) {
  if (against.empty())
    against = level == core::Level::kernel
                  ? "sdpa.math (fp32)"
                  : fmt::format("the harness's {} with sdpa.math (fp32)", core::to_string(level));
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
  r.mean_abs_error = err.to(at::kDouble).mean().item<double>();
  if (excess.flatten()[worst].item<double>() > 0) {
    r.ok = false;
    std::vector<int64_t> idx(o.dim());
    int64_t rest = worst;
    for (int64_t d = o.dim() - 1; d >= 0; --d) {
      idx[d] = rest % o.size(d);
      rest /= o.size(d);
    }
    r.message = fmt::format(
        "{} differs from {}: max abs error {:.3g} at [{}] (got {:.6g}, "
        "expected {:.6g}; tolerance atol {:g} + rtol {:g})",
        level == core::Level::kernel ? "output" : fmt::format("{} output", core::to_string(level)),
        against, r.max_abs_error, fmt::join(idx, ", "), o.flatten()[worst].item<double>(),
        ref.flatten()[worst].item<double>(), tol.atol, tol.rtol);
  }
  return r;
}

}  // namespace attnprof::runner
