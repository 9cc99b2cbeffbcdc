// Turns a case and its tensors into kernels/attention_params.h's AttentionParams, for the
// adapters of attnprof's own kernels (cpu.cpp, cuda.cpp). The case's mask kind is applied
// natively (causal, window, seq_lens); only a custom additive mask travels as data, converted
// to the fp32 contiguous layout the kernels read.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>

#include "harness/kernel/package.h"
#include "kernels/attention_params.h"
#include "worker/kernel/registry.h"
#include "worker/kernel/variants/variants.h"

namespace attnprof::kernel {

inline std::optional<kernels::ScalarType> kernel_dtype(core::DType t) {
  switch (t) {
    case core::DType::fp32:
      return kernels::ScalarType::f32;
    case core::DType::fp16:
      return kernels::ScalarType::f16;
    case core::DType::bf16:
      return kernels::ScalarType::bf16;
  }
  return std::nullopt;
}

// Shape and mask fields from the case alone (no pointers): what the support predicates read.
// Pointers that only mark presence (mask, seq_lens) get a placeholder so the checks see them.
inline kernels::AttentionParams case_params(const core::Case& c) {
  kernels::AttentionParams p;
  p.dtype = kernel_dtype(c.dtype).value_or(kernels::ScalarType::f32);
  p.batch = c.batch, p.heads_q = c.model.heads, p.heads_kv = c.model.kv_heads;
  p.seq_q = c.q_len, p.seq_k = c.kv_len, p.head_dim = c.model.head_dim;
  p.set_contiguous_bhsd();
  p.scale = static_cast<float>(softmax_scale(c));
  p.causal = c.mask == core::MaskKind::causal || c.mask == core::MaskKind::sliding_window;
  p.window = c.mask == core::MaskKind::sliding_window ? c.window : 0;
  static const float placeholder_mask = 0;
  static const int placeholder_len = 0;
  // Document and prefix masks reach the kernels as additive masks (bind_params).
  if (c.mask == core::MaskKind::custom || c.mask == core::MaskKind::document ||
      c.mask == core::MaskKind::prefix)
    p.mask = &placeholder_mask, p.mask_batch = 1;
  if (!c.seq_lens.empty()) p.seq_lens = &placeholder_len;
  return p;
}

// Params over the inputs' tensors and `out`. Tensors the params point at that the inputs do not
// hold (the fp32 mask) are kept in `keep` for as long as the kernel may read them.
struct BoundParams {
  kernels::AttentionParams p;
  at::Tensor mask_f32;
};

inline BoundParams bind_params(const Inputs& in, const at::Tensor& out) {
  BoundParams b;
  kernels::AttentionParams& p = b.p;
  p = case_params(*in.spec);
  p.mask = nullptr, p.seq_lens = nullptr;
  const auto dt = kernel_dtype(in.spec->dtype);
  if (!dt) throw Unsupported("unsupported dtype for attnprof's kernels");
  if (!in.q.is_contiguous() || !in.k.is_contiguous() || !in.v.is_contiguous() ||
      !out.is_contiguous())
    throw Unsupported("attnprof's kernels take contiguous BHSD tensors");
  p.q = in.q.data_ptr(), p.k = in.k.data_ptr(), p.v = in.v.data_ptr(), p.o = out.data_ptr();
  p.batch = int(in.q.size(0)), p.heads_q = int(in.q.size(1)), p.heads_kv = int(in.k.size(1));
  p.seq_q = int(in.q.size(2)), p.seq_k = int(in.k.size(2)), p.head_dim = int(in.q.size(3));
  p.set_contiguous_bhsd();
  p.scale = static_cast<float>(in.scale);
  if (in.seq_lens.defined()) p.seq_lens = in.seq_lens.data_ptr<int>();
  // A bool mask is the case's own mask kind, which the kernels apply natively (but document and
  // prefix); an additive one is the custom mask (with padding folded in by the workload).
  const bool structured =
      in.spec->mask == core::MaskKind::document || in.spec->mask == core::MaskKind::prefix;
  if (in.mask.defined() && in.mask.scalar_type() == at::kBool && structured) {
    // Masks the kernels have no rule for: as an additive mask, 0 where kept, -inf elsewhere.
    b.mask_f32 = at::zeros(in.mask.sizes(), in.mask.options().dtype(at::kFloat))
                     .masked_fill_(in.mask.logical_not(), -INFINITY)
                     .contiguous();
    p.mask = b.mask_f32.data_ptr<float>();
    p.mask_batch = int(b.mask_f32.size(0));
  } else if (in.mask.defined() && in.mask.scalar_type() != at::kBool) {
    b.mask_f32 = in.mask.to(at::kFloat).contiguous();
    p.mask = b.mask_f32.data_ptr<float>();
    p.mask_batch = int(b.mask_f32.size(0));
  }
  return b;
}

// The why of an unsupported Status as a skip, an error as an exception.
inline void throw_unless_ok(const kernels::Status& s) {
  if (s.ok()) return;
  if (s.code == kernels::Status::Code::unsupported) throw Unsupported(s.message);
  throw std::runtime_error(s.message);
}

}  // namespace attnprof::kernel
