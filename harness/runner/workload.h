// Turns a core::Case into tensors: q, k, v (seeded, so every run of a case sees the same data),
// the "may attend" mask its mask kind implies, per-sequence lengths, and for block/layer cases
// the projection and MLP weights around the kernel.
#pragma once

#include <ATen/ATen.h>

#include <functional>

#include "harness/core/types.h"
#include "harness/kernel/registry.h"

namespace attnprof::runner {

at::Device device_of(const core::Case& c);
at::ScalarType scalar_type_of(core::DType d);

// q, k, v and mask for the attention kernel itself.
kernel::Inputs make_inputs(const core::Case& c);

// Boolean [B, 1, Sq, Sk] "may attend" mask for a case (true = keep), or an undefined tensor
// when none is needed (no mask, or a causal prefill that is_causal expresses exactly).
at::Tensor make_mask(const core::Case& c, const at::Tensor& seq_lens, at::Device device);

// The name of the user scope around each kernel call: "attnprof::<variant>".
std::string attention_scope(std::string_view variant);

// What one timed call runs: the kernel alone, or the attention block (QKV projection, kernel,
// output projection), or the whole transformer layer (norms, attention block, MLP), per the
// case's level. Owns its weights and inputs.
std::function<at::Tensor()> make_workload(const core::Case& c, const kernel::Variant& v,
                                          const kernel::Inputs& in);

}  // namespace attnprof::runner
