// The kernel registry: every attention implementation attnprof can run, by stable name.
// A variant says whether it supports a case (a reason to skip, never a crash), launches on the
// current stream, and has FLOP and byte models for the roofline. Adding a variant: one new file
// in worker/kernel/variants/ defining register_<family>(Registry&), and one line in
// registry.cpp's list.
#pragma once

#include <ATen/ATen.h>

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"
#include "harness/kernel/flops.h"

namespace attnprof::kernel {

// Tensors for one case, made by the runner (worker/runner/workload). Layout [B, H, S, D]
// ("BHSD", what SDPA takes), contiguous, on the case's device and dtype.
struct Inputs {
  at::Tensor q;  // [B, Hq, Sq, D]
  at::Tensor k;  // [B, Hkv, Sk, D]
  at::Tensor v;  // [B, Hkv, Sk, D]
  // Boolean "may attend" mask [B, 1, Sq, Sk] (true = keep) built from the case's mask kind,
  // or, for mask "custom", an additive float mask [1 or B, 1, Sq, Sk] at the input dtype,
  // window and per-sequence lengths; undefined when the case has mask "none", or "causal" with
  // Sq == Sk (then is_causal suffices). Variants with native masking may ignore it and use
  // the case's fields instead.
  at::Tensor mask;
  at::Tensor seq_lens;  // int32 [B] valid key lengths, defined only for padding/varlen cases
  const core::Case* spec = nullptr;
  double scale = 0;  // the softmax scale to use (already defaulted to 1/sqrt(D))
};

// What a whole attention block or transformer layer takes (worker/runner/workload), for
// variants that compute one themselves (a compiled package of the module): the layer's input
// and weights, seeded like the kernel's inputs, and the K/V cache the new keys and values go
// into. Layer-only weights are undefined at block level; w3 only for gated (SwiGLU) MLPs.
struct BlockInputs {
  at::Tensor x;  // [B, Sq, hidden]
  at::Tensor wqkv, wo;
  at::Tensor k_cache, v_cache;  // [B, Hkv, Sk, D]
  at::Tensor norm1, norm2, w1, w2, w3;
  at::Tensor mask;  // as Inputs::mask
  const core::Case* spec = nullptr;
};

struct Variant {
  std::string name;  // stable: "sdpa.flash", "eager", "cpu.flash", "op:myns::attn"
  std::string description;
  // nullopt: supported. A string: why this case is skipped (unsupported device, dtype, mask...).
  std::function<std::optional<std::string>(const core::Case&)> unsupported;
  // Runs the attention forward on the current stream; returns O [B, Hq, Sq, D].
  std::function<at::Tensor(const Inputs&)> launch;
  // Which implementation actually ran, when the variant delegates a choice (sdpa.auto).
  std::function<std::string(const Inputs&)> chosen_backend;
  // Optional, once per case before its inputs are made and before anything is timed: loads
  // what the variant needs for this case (a compiled package). Throws Unsupported to skip the
  // case with a reason, anything else to end it with an error.
  std::function<void(const core::Case&)> prepare;
  // Optional: the whole block or layer (BlockInputs -> [B, Sq, hidden]). A variant that has it
  // replaces the harness's workload at those levels instead of being called inside it.
  std::function<at::Tensor(const BlockInputs&)> launch_block;
  // Optional, at the case's end: metrics of the variant's own (a torch.compile variant's
  // compile.* figures), stored with the case's, never samples.
  std::function<std::map<std::string, double>()> metrics;
  // The score modifiers (harness/kernel/score_mod.h, by family: "alibi", "softcap", ...) it
  // computes; a case with another is skipped, naming it (see unsupported below).
  std::vector<std::string> score_mods;
};

// Why `v` cannot run case `c`, or nullopt: its score modifier first (Variant::score_mods), then
// the variant's own predicate. The runner and the reference check ask this, never v.unsupported.
std::optional<std::string> unsupported(const Variant& v, const core::Case& c);

// The arguments a whole-module kernel (an aoti: package, a py: module) is called with, in the
// order of docs/scenarios.md's calling convention (harness/kernel/package.h, package_inputs):
// q, k, v[, mask] at the kernel level; x, wqkv, wo, k_cache, v_cache, then for a layer norm1,
// norm2, w1, w2[, w3], then [mask].
std::vector<at::Tensor> convention_args(const Inputs& in);
std::vector<at::Tensor> convention_args(const BlockInputs& in);

// Whether `v` computes a case's whole workload (a block or layer package) rather than the
// attention inside the harness's block.
bool replaces_workload(const core::Case& c, const Variant& v);

class Registry {
 public:
  void add(Variant v);  // throws std::logic_error on a duplicate name
  const Variant* find(std::string_view name) const;
  // A deque: variants registered later (plugin ops) never move the earlier ones.
  const std::deque<Variant>& all() const { return m_variants; }
  std::vector<std::string> names() const;

 private:
  std::deque<Variant> m_variants;
};

// The process-wide registry with every built-in variant (and plugins once loaded).
Registry& registry();

// The byte model for attention forward (the FLOPs are harness/kernel/flops.h's): bytes =
// |Q|+|K|+|V|+|O| at the case's dtype with K and V at each sequence's own length (the minimum
// traffic of a fused kernel), plus, per variant (c.kernel), what it moves besides: cuda.naive's
// fp32 score matrix. Other unfused paths move more than modelled, which their lower bandwidth
// figure shows.
double attention_bytes(const core::Case&);

}  // namespace attnprof::kernel
