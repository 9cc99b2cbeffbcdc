// Turns a core::Case into tensors: q, k, v (seeded, so every run of a case sees the same data),
// the "may attend" mask its mask kind implies, per-sequence lengths, and for block/layer cases
// the projection and MLP weights around the kernel.
#pragma once

#include <ATen/ATen.h>

#include <functional>

#include "harness/core/types.h"
#include "worker/kernel/registry.h"

namespace attnprof::runner {

at::Device device_of(const core::Case& c);
at::ScalarType scalar_type_of(core::DType d);

// q, k, v and mask for the attention kernel itself.
kernel::Inputs make_inputs(const core::Case& c);

// Boolean [B, 1, Sq, Sk] "may attend" mask for a case (true = keep), or an undefined tensor
// when none is needed (no mask, or a causal prefill that is_causal expresses exactly). With an
// additive score modifier, make_inputs turns it into an additive float mask [B, H, Sq, Sk].
// `always`: the mask even where is_causal or nothing would do (an additive modifier needs it).
at::Tensor make_mask(const core::Case& c, const at::Tensor& seq_lens, at::Device device,
                     bool always = false);

// Positions as the masks and score modifiers use them (docs/scenarios.md): each sequence's valid
// keys `lens` [B, 1, 1], the queries' positions `qpos` [B, Sq, 1] (prefill: query i at i;
// decode: the last Sq of the valid keys) and the keys' `kpos` [1, 1, Sk]; on the CPU.
struct Positions {
  at::Tensor lens, qpos, kpos;
};
Positions positions(const core::Case& c, const at::Tensor& seq_lens);

// An additive score modifier's bias [B or 1, H, Sq, Sk] (fp64, on the CPU), or an undefined
// tensor for none and softcap (which eager applies itself).
at::Tensor score_bias(const core::Case& c, const at::Tensor& seq_lens);

// The name of the user scope around each kernel call: "attnprof::<variant>".
std::string attention_scope(std::string_view variant);

// The block's or layer's input and weights (seeded: base seed + 1 for the weights, + 2 for x),
// with the kernel's k and v as the K/V cache and its mask.
kernel::BlockInputs make_block_inputs(const core::Case& c, const kernel::Inputs& in);

// The case's block or layer computed by the harness in fp32 with sdpa.math: what a variant
// that replaces the workload (kernel::replaces_workload) is checked against. With `ref`: that
// kernel inside the harness's block, or the whole block where `ref` is a package of it, on fp32
// copies of the case's numbers when `fp32`, else on copies at the case's dtype.
at::Tensor reference_workload(const core::Case& c, const kernel::Inputs& in);
at::Tensor reference_workload(const core::Case& c, const kernel::Inputs& in,
                              const kernel::Variant& ref, bool fp32);

// What one timed call runs: the kernel alone, or the attention block (QKV projection, kernel,
// output projection), or the whole transformer layer (norms, attention block, MLP), per the
// case's level; or, for a variant that replaces the workload, that variant's one call. Owns
// its weights and inputs.
std::function<at::Tensor()> make_workload(const core::Case& c, const kernel::Variant& v,
                                          const kernel::Inputs& in);

}  // namespace attnprof::runner
