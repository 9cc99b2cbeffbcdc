// "Standard attention" as separate ATen ops: QK^T, scale, mask, softmax, PV. Each step is its
// own op (and kernel), so the cost matrix shows the memory-bound softmax and masking that a
// fused kernel hides.
#include "harness/kernel/score_mod.h"
#include "worker/kernel/variants/variants.h"

namespace attnprof::kernel {

void register_eager(Registry& r) {
  Variant v;
  v.name = "eager";
  v.description = "matmul, scale, mask, softmax, matmul as separate ATen ops";
  v.unsupported = [](const core::Case&) { return std::optional<std::string>{}; };
  v.launch = [](const Inputs& in) {
    at::Tensor k = in.k, vv = in.v;
    const int64_t group = in.q.size(1) / in.k.size(1);
    if (group > 1) {  // GQA: each kv head serves `group` query heads
      k = k.repeat_interleave(group, 1);
      vv = vv.repeat_interleave(group, 1);
    }
    at::Tensor scores = at::matmul(in.q, k.transpose(-2, -1)).mul_(in.scale);
    // The score modifiers: softcap here; the additive ones came with the mask (workload.cpp).
    if (const auto mod = parse_score_mod(in.spec->score_mod);
        mod && mod->kind == ScoreMod::Kind::softcap)
      scores = scores.div(mod->cap).tanh_().mul_(mod->cap);
    if (in.mask.defined() && in.mask.scalar_type() != at::kBool) {
      scores.add_(in.mask);  // custom additive mask
    } else if (in.mask.defined()) {
      scores.masked_fill_(in.mask.logical_not(), -std::numeric_limits<double>::infinity());
    } else if (in.spec->mask == core::MaskKind::causal) {
      const int64_t sq = in.q.size(2), sk = k.size(2);
      at::Tensor keep = at::ones({sq, sk}, in.q.options().dtype(at::kBool)).tril(sk - sq);
      scores.masked_fill_(keep.logical_not(), -std::numeric_limits<double>::infinity());
    }
    // _safe_softmax: a row that sees no key (a short sequence under a sliding window, say)
    // gives zeros, as sdpa.math and our kernels do, not NaN.
    at::Tensor p = at::_safe_softmax(scores, -1);
    return at::matmul(p, vv);
  };
  v.chosen_backend = [](const Inputs&) { return std::string("eager"); };
  v.score_mods = {"alibi", "softcap", "rel_bias", "head_bias"};
  r.add(std::move(v));
}

}  // namespace attnprof::kernel
