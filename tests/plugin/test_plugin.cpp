// A user's attention kernel as a TORCH_LIBRARY op: plain matmul-softmax-matmul, with GQA and a
// bottom-right causal mask, in the calling convention of harness/kernel/plugin.h.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal,
                     double scale) {
  const int64_t group = q.size(1) / k.size(1);
  at::Tensor kk = group > 1 ? k.repeat_interleave(group, 1) : k;
  at::Tensor vv = group > 1 ? v.repeat_interleave(group, 1) : v;
  at::Tensor s = at::matmul(q, kk.transpose(-2, -1)) * scale;
  if (is_causal) {
    const int64_t sq = q.size(2), sk = k.size(2);
    at::Tensor keep = at::ones({sq, sk}, q.options().dtype(at::kBool)).tril(sk - sq);
    s = s.masked_fill(keep.logical_not(), -INFINITY);
  }
  return at::matmul(at::softmax(s, -1), vv);
}

// Deliberately wrong (drops the scale): the harness must mark it failed, not time it.
at::Tensor attention_wrong(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           bool is_causal, double) {
  return attention(q, k, v, is_causal, 1.0);
}

}  // namespace

TORCH_LIBRARY(attnprof_test, m) {
  m.def("attention(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor");
  m.def("attention_wrong(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor");
  m.def("bad_schema(Tensor q) -> Tensor");
}

TORCH_LIBRARY_IMPL(attnprof_test, CompositeExplicitAutograd, m) {
  m.impl("attention", attention);
  m.impl("attention_wrong", attention_wrong);
  m.impl("bad_schema", [](const at::Tensor& q) { return q; });
}
