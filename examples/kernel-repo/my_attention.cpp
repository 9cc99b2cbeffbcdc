// my_attention.cpp: an attention kernel as a LibTorch custom op, the way a kernel repository
// gives one to attnprof. Scaled dot-product attention written out (matmul, mask, softmax,
// matmul), grouped-query heads included; attnprof checks it against sdpa.math, then times it.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     bool is_causal, double scale) {
  at::Tensor keys = k, values = v;
  if (k.size(1) != q.size(1)) {  // grouped-query attention: each kv head serves a group
    keys = k.repeat_interleave(q.size(1) / k.size(1), 1);
    values = v.repeat_interleave(q.size(1) / k.size(1), 1);
  }
  at::Tensor scores = at::matmul(q, keys.transpose(-2, -1)).mul_(scale);
  if (is_causal) {  // bottom-right aligned: query i sees keys up to Sk - Sq + i
    const int64_t sq = q.size(2), sk = k.size(2);
    auto blocked = at::ones({sq, sk}, q.options().dtype(at::kBool)).triu_(sk - sq + 1);
    scores.masked_fill_(blocked, -std::numeric_limits<double>::infinity());
  }
  return at::matmul(at::softmax(scores, -1), values);
}

}  // namespace

TORCH_LIBRARY(my_ns, m) {
  m.def("attention(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor");
}

TORCH_LIBRARY_IMPL(my_ns, CompositeExplicitAutograd, m) {
  m.impl("attention", attention);
}
