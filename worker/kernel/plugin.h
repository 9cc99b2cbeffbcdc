// Users' own kernels: a shared library that registers TORCH_LIBRARY ops, loaded with
// --plugin lib.so, named in scenarios as "op:<namespace>::<name>".
//
// Calling convention (docs/plugins.md): the op's schema is
//   <ns>::<name>(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor
// optionally followed by "Tensor? attn_mask=None". q is [B, Hq, Sq, D], k and v [B, Hkv, Sk, D]
// (GQA when Hkv < Hq), contiguous, on the case's device and dtype; is_causal is bottom-right
// aligned (query i sits at key position Sk - Sq + i); attn_mask, when present, is the boolean
// "may attend" mask [B, 1, Sq, Sk] (true = keep) or an additive float mask. Returns O
// [B, Hq, Sq, D]. An op without the attn_mask argument skips cases that need a mask.
#pragma once

#include <string>
#include <string_view>

#include "worker/kernel/registry.h"

namespace attnprof::kernel {

// dlopens the library (its static initializers register the ops). Throws util::InputError
// naming the path and dlerror() on failure.
void load_plugin(const std::string& path);

// The variant for a registry name, an "op:ns::name" (registered on first use from the
// dispatcher's schema) or an "aoti:PATH.pt2" package (registered on first use; the file is
// read per case, in Variant::prepare); nullptr when none fits. `why` says what was missing.
const Variant* lookup(std::string_view name, std::string* why = nullptr);

}  // namespace attnprof::kernel
