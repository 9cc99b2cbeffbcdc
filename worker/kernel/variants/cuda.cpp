// cuda.naive, cuda.flash, cuda.decode and cuda.varlen: attnprof's own CUDA kernels
// (kernels/cuda) behind the registry, launched on LibTorch's current CUDA stream. Workspaces
// come from LibTorch's caching allocator, so they cost no cudaMalloc after the first call.
// Built only with ATTNPROF_CUDA (worker/kernel/CMakeLists.txt adds this file when the
// kernels_cuda library exists).
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda/attention.h"
#include "worker/kernel/variants/kernel_params.h"
#include "worker/kernel/variants/variants.h"

namespace attnprof::kernel {
namespace {

using kernels::AttentionParams;
using kernels::Status;

// The device-independent part of every cuda.* predicate, then the kernel's own limits.
std::optional<std::string> cuda_unsupported(const char* name, const core::Case& c,
                                            Status (*supports)(const AttentionParams&)) {
  if (!is_cuda_device(c)) return std::string(name) + " runs on CUDA devices only";
  const Status s = supports(case_params(c));
  if (!s.ok())
    return s.message.rfind("cuda.", 0) == 0 ? s.message : std::string(name) + ": " + s.message;
  return std::nullopt;
}

at::Tensor workspace(std::size_t bytes, const at::Tensor& like) {
  return at::empty({static_cast<int64_t>(std::max<std::size_t>(bytes, 1))},
                   like.options().dtype(at::kByte));
}

cudaStream_t stream_of(const at::Tensor& t) {
  return at::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

Variant make(const char* name, const char* description, Status (*supports)(const AttentionParams&),
             std::function<Status(const AttentionParams&, const at::Tensor& like)> run) {
  Variant v;
  v.name = name;
  v.description = description;
  v.unsupported = [name, supports](const core::Case& c) {
    return cuda_unsupported(name, c, supports);
  };
  v.launch = [run](const Inputs& in) {
    const c10::cuda::CUDAGuard guard(in.q.device());
    at::Tensor out = at::empty_like(in.q);
    const BoundParams b = bind_params(in, out);
    throw_unless_ok(run(b.p, in.q));
    return out;
  };
  const std::string chosen = name;
  v.chosen_backend = [chosen](const Inputs&) { return chosen; };
  return v;
}

// Packed sequences [total, H, D] from BHSD: every sequence keeps its Sq queries and Sk keys
// (cu_seqlens at multiples of Sq and Sk); padding stays a seq_lens mask, so the answer is the
// case's own and the reference check applies unchanged.
Status run_varlen(const AttentionParams& bhsd, const Inputs& in, const at::Tensor& out) {
  const int64_t B = in.q.size(0), Sq = in.q.size(2), Sk = in.k.size(2);
  at::Tensor q = in.q.transpose(1, 2).contiguous();  // [B, Sq, Hq, D] = [B*Sq, Hq, D]
  at::Tensor k = in.k.transpose(1, 2).contiguous();
  at::Tensor v = in.v.transpose(1, 2).contiguous();
  at::Tensor o = at::empty_like(q);
  at::Tensor cu = at::arange(0, B + 1, in.q.options().dtype(at::kInt));
  at::Tensor cu_q = cu * static_cast<int>(Sq), cu_k = cu * static_cast<int>(Sk);
  AttentionParams p = bhsd;
  p.q = q.data_ptr(), p.k = k.data_ptr(), p.v = v.data_ptr(), p.o = o.data_ptr();
  const int64_t d = p.head_dim;
  p.q_stride_s = p.heads_q * d, p.q_stride_h = d;
  p.k_stride_s = p.v_stride_s = p.heads_kv * d, p.k_stride_h = p.v_stride_h = d;
  p.o_stride_s = p.q_stride_s, p.o_stride_h = d;
  p.q_stride_b = p.k_stride_b = p.v_stride_b = p.o_stride_b = 0;
  p.cu_seqlens_q = cu_q.data_ptr<int>(), p.cu_seqlens_k = cu_k.data_ptr<int>();
  const Status s = kernels::cuda::varlen_forward(p, stream_of(in.q));
  if (s.ok()) out.copy_(o.transpose(1, 2));
  return s;
}

Status varlen_supports(const AttentionParams& p) {
  AttentionParams packed = p;
  static const int placeholder = 0;
  packed.cu_seqlens_q = packed.cu_seqlens_k = &placeholder;
  return kernels::cuda::flash_supports(packed);
}

}  // namespace

void register_cuda(Registry& r) {
  r.add(make("cuda.naive",
             "attnprof's unfused CUDA attention: QK^T, softmax and PV kernels through a "
             "materialized fp32 score matrix",
             kernels::cuda::naive_supports, [](const AttentionParams& p, const at::Tensor& like) {
               at::Tensor ws = workspace(kernels::cuda::naive_workspace_bytes(p), like);
               return kernels::cuda::naive_forward(p, ws.data_ptr(), stream_of(like));
             }));
  r.add(make("cuda.flash",
             "attnprof's fused CUDA kernel, FlashAttention-2 style (online softmax, SIMT fp32 "
             "accumulation, head_dim 64/128)",
             kernels::cuda::flash_supports, [](const AttentionParams& p, const at::Tensor& like) {
               return kernels::cuda::flash_forward(p, stream_of(like));
             }));
  r.add(make("cuda.decode",
             "attnprof's flash-decoding CUDA kernel (Sq <= 16): keys split across blocks, "
             "partials combined",
             kernels::cuda::decode_supports, [](const AttentionParams& p, const at::Tensor& like) {
               const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
               const int splits = kernels::cuda::decode_splits(p, sms);
               at::Tensor ws = workspace(kernels::cuda::decode_workspace_bytes(p, splits), like);
               return kernels::cuda::decode_forward(p, splits, ws.data_ptr(), stream_of(like));
             }));

  Variant varlen;
  varlen.name = "cuda.varlen";
  varlen.description =
      "cuda.flash over packed sequences ([total, H, D] with cu_seqlens); the adapter repacks "
      "the BHSD inputs, and that copy is part of its time";
  varlen.unsupported = [](const core::Case& c) {
    return cuda_unsupported("cuda.varlen", c, varlen_supports);
  };
  varlen.launch = [](const Inputs& in) {
    const c10::cuda::CUDAGuard guard(in.q.device());
    at::Tensor out = at::empty_like(in.q);
    const BoundParams b = bind_params(in, out);
    throw_unless_ok(run_varlen(b.p, in, out));
    return out;
  };
  varlen.chosen_backend = [](const Inputs&) { return std::string("cuda.varlen"); };
  r.add(std::move(varlen));
}

}  // namespace attnprof::kernel
