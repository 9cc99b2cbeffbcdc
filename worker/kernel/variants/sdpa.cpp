// LibTorch's scaled_dot_product_attention, once with the dispatcher's own choice (sdpa.auto)
// and once per backend forced on (math, flash, efficient, cudnn). On the CPU, "flash" is
// LibTorch's fused CPU kernel. Forcing uses the same global toggles as Python's sdpa_kernel()
// context manager, restored after each call.
#include <ATen/Context.h>
#include <ATen/SDPBackend.h>

#include "worker/kernel/variants/variants.h"

namespace attnprof::kernel {
namespace {

struct BackendToggles {
  bool flash, efficient, math, cudnn;
  static BackendToggles current() {
    auto& c = at::globalContext();
    return {c.userEnabledFlashSDP(), c.userEnabledMemEfficientSDP(), c.userEnabledMathSDP(),
            c.userEnabledCuDNNSDP()};
  }
  void apply() const {
    auto& c = at::globalContext();
    c.setSDPUseFlash(flash);
    c.setSDPUseMemEfficient(efficient);
    c.setSDPUseMath(math);
    c.setSDPUseCuDNN(cudnn);
  }
};

// Enables exactly one backend for its lifetime.
class ForceBackend {
 public:
  explicit ForceBackend(at::SDPBackend b) : m_saved(BackendToggles::current()) {
    BackendToggles{b == at::SDPBackend::flash_attention, b == at::SDPBackend::efficient_attention,
                   b == at::SDPBackend::math, b == at::SDPBackend::cudnn_attention}
        .apply();
  }
  ~ForceBackend() { m_saved.apply(); }
  ForceBackend(const ForceBackend&) = delete;
  ForceBackend& operator=(const ForceBackend&) = delete;

 private:
  BackendToggles m_saved;
};

// The score modifiers that are an additive bias: they reach SDPA inside its float attn_mask.
std::vector<std::string> additive_score_mods() {
  return {"alibi", "rel_bias", "head_bias"};
}

std::string backend_name(int64_t b) {
  switch (static_cast<at::SDPBackend>(b)) {
    case at::SDPBackend::math:
      return "math";
    case at::SDPBackend::flash_attention:
      return "flash";
    case at::SDPBackend::efficient_attention:
      return "efficient";
    case at::SDPBackend::cudnn_attention:
      return "cudnn";
    case at::SDPBackend::overrideable:
      return "overrideable";
    default:
      return "none";
  }
}

// SDPA's is_causal is top-left aligned; ours is bottom-right (a KV cache's). They agree only
// when Sq == Sk; the workload builds an explicit mask otherwise (or none for Sq == 1, which
// sees every key).
bool is_causal_flag(const Inputs& in) {
  return in.spec->mask == core::MaskKind::causal && !in.mask.defined() &&
         in.q.size(2) == in.k.size(2);
}

bool gqa(const Inputs& in) {
  return in.q.size(1) != in.k.size(1);
}

std::optional<at::Tensor> mask_of(const Inputs& in) {
  if (in.mask.defined()) return in.mask;
  return std::nullopt;
}

at::Tensor call_sdpa(const Inputs& in) {
  return at::scaled_dot_product_attention(in.q, in.k, in.v, mask_of(in), 0.0, is_causal_flag(in),
                                          in.scale, gqa(in));
}

std::string chosen(const Inputs& in) {
  return backend_name(at::_fused_sdp_choice(in.q, in.k, in.v, mask_of(in), 0.0, is_causal_flag(in),
                                            in.scale, gqa(in)));
}

Variant forced(const char* name, at::SDPBackend backend, bool cuda_only, const char* what) {
  Variant v;
  v.name = name;
  v.description = what;
  v.unsupported = [cuda_only, name](const core::Case& c) -> std::optional<std::string> {
    if (cuda_only && !is_cuda_device(c)) return std::string(name) + " runs on CUDA devices only";
    return std::nullopt;
  };
  v.launch = [backend, name](const Inputs& in) {
    ForceBackend force(backend);
    // Ask the dispatcher first: with only this backend enabled, "none" means the inputs are
    // outside what the backend supports, which is a skip, not an error.
    if (backend != at::SDPBackend::math &&
        static_cast<at::SDPBackend>(at::_fused_sdp_choice(
            in.q, in.k, in.v, mask_of(in), 0.0, is_causal_flag(in), in.scale, gqa(in))) != backend)
      throw Unsupported(std::string(name) +
                        " does not support these inputs (LibTorch's "
                        "dispatcher rejected them; see its warnings for the reason)");
    return call_sdpa(in);
  };
  v.chosen_backend = [backend](const Inputs&) { return backend_name(int64_t(backend)); };
  v.score_mods = additive_score_mods();
  return v;
}

}  // namespace

bool is_cuda_device(const core::Case& c) {
  return c.hardware.device.rfind("cuda", 0) == 0;
}

void register_sdpa(Registry& r) {
  Variant a;
  a.name = "sdpa.auto";
  a.description = "at::scaled_dot_product_attention, backend chosen by LibTorch's dispatcher";
  a.unsupported = [](const core::Case&) { return std::optional<std::string>{}; };
  a.launch = call_sdpa;
  a.chosen_backend = chosen;
  a.score_mods = additive_score_mods();
  r.add(std::move(a));
  r.add(forced("sdpa.math", at::SDPBackend::math, false,
               "SDPA math backend (composite ATen ops); the reference"));
  r.add(forced("sdpa.flash", at::SDPBackend::flash_attention, false,
               "SDPA flash backend (FlashAttention-2 on CUDA, the fused kernel on the CPU)"));
  r.add(forced("sdpa.efficient", at::SDPBackend::efficient_attention, true,
               "SDPA memory-efficient backend (xformers-style, CUDA)"));
  r.add(forced("sdpa.cudnn", at::SDPBackend::cudnn_attention, true, "SDPA cuDNN backend (CUDA)"));
}

}  // namespace attnprof::kernel
