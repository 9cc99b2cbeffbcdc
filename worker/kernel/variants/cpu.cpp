// cpu.naive and cpu.flash: attnprof's own CPU kernels (kernels/cpu) behind the registry. They
// run on the CPU only, with LibTorch's intra-op thread count, and apply the case's mask kind
// natively.
#include <ATen/Parallel.h>

#include "kernels/cpu/attention.h"
#include "worker/kernel/variants/kernel_params.h"
#include "worker/kernel/variants/variants.h"

namespace attnprof::kernel {
namespace {

// The reference keeps one [Sq, Sk] double matrix per sequence; beyond this it is no reference.
constexpr double naive_max_score_bytes = 1ull << 31;

std::optional<std::string> cpu_unsupported(const char* name, const core::Case& c) {
  if (c.hardware.device != "cpu") return std::string(name) + " runs on the CPU only";
  if (const char* why = kernels::check_shape(case_params(c))) return std::string(name) + ": " + why;
  return std::nullopt;
}

}  // namespace

void register_cpu(Registry& r) {
  Variant naive;
  naive.name = "cpu.naive";
  naive.description = "attnprof's CPU reference: materialized scores, double accumulation";
  naive.unsupported = [](const core::Case& c) -> std::optional<std::string> {
    if (auto why = cpu_unsupported("cpu.naive", c)) return why;
    if (8.0 * c.q_len * c.kv_len > naive_max_score_bytes)
      return std::string("cpu.naive: the score matrix would exceed 2 GiB");
    return std::nullopt;
  };
  naive.launch = [](const Inputs& in) {
    at::Tensor out = at::empty_like(in.q);
    const BoundParams b = bind_params(in, out);
    throw_unless_ok(kernels::cpu::naive_forward(b.p));
    return out;
  };
  naive.chosen_backend = [](const Inputs&) { return std::string("cpu.naive"); };
  r.add(std::move(naive));

  Variant flash;
  flash.name = "cpu.flash";
  flash.description =
      "attnprof's tiled online-softmax CPU kernel (FlashAttention-2 loop order), "
      "multi-threaded over (batch, head, query block)";
  flash.unsupported = [](const core::Case& c) { return cpu_unsupported("cpu.flash", c); };
  flash.launch = [](const Inputs& in) {
    at::Tensor out = at::empty_like(in.q);
    const BoundParams b = bind_params(in, out);
    throw_unless_ok(kernels::cpu::flash_forward(b.p, at::get_num_threads()));
    return out;
  };
  flash.chosen_backend = [](const Inputs&) { return std::string("cpu.flash"); };
  r.add(std::move(flash));
}

}  // namespace attnprof::kernel
