// attention.cpp: the kernel as a LibTorch custom op in attnprof's calling convention.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "kernel.h"

namespace {

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     bool is_causal, double scale) {
  at::Tensor qc = q.contiguous().to(at::kFloat), kc = k.contiguous().to(at::kFloat),
             vc = v.contiguous().to(at::kFloat);
  at::Tensor o = at::empty_like(qc);
  busy_attention(qc.data_ptr<float>(), kc.data_ptr<float>(), vc.data_ptr<float>(),
                 o.data_ptr<float>(), q.size(0), q.size(1), k.size(1), q.size(2), k.size(2),
                 q.size(3), is_causal, static_cast<float>(scale));
  return o.to(q.scalar_type());
}

}  // namespace

TORCH_LIBRARY(busy, m) {
  m.def("attention(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor");
}

TORCH_LIBRARY_IMPL(busy, CPU, m) { m.impl("attention", attention); }
