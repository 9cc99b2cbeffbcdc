// The one parameter struct every attnprof attention kernel takes (CPU and CUDA alike), and the
// masking rules they all share. Raw pointers and shapes only: no LibTorch, so kernels/cuda's
// .cu files and kernels/cpu build without it, and worker/kernel/variants adapt tensors to it.
//
// Layout: q [B, Hq, Sq, D], k and v [B, Hkv, Sk, D], o [B, Hq, Sq, D] ("BHSD"), with the head
// dimension contiguous and the other strides given in elements (set_contiguous_bhsd() fills
// them for contiguous tensors). Variable-length batches (packed sequences, as FlashAttention's
// varlen API takes them): with cu_seqlens_q (or _k) set, sequence b's queries (keys) are rows
// cu_seqlens_q[b] .. cu_seqlens_q[b+1] of a packed [total, H, D] tensor (stride_b unused), and
// seq_q (seq_k) is the longest of them.
//
// Masking, in the order it applies (a key must pass every rule that is on):
//   causal, bottom-right aligned: query i of sequence b sits at absolute position
//     p = Sk_b - Sq_b + i, and sees keys j <= p (prefill Sq == Sk: the lower triangle; decode
//     Sq = 1: every key);
//   sliding window w > 0: keys p - w < j <= p (a window implies causal);
//   seq_lens[b] (padding): keys j >= seq_lens[b] are masked;
//   mask: an additive float mask [mask_batch (1 or B), 1, Sq, Sk]; -inf masks a key.
// A query row that sees no key outputs zeros (not NaN), as FlashAttention does.
//
// Every pointer (seq_lens, mask and cu_seqlens included) must be readable where the kernel runs:
// host memory for kernels/cpu, device memory for kernels/cuda.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#if defined(__CUDACC__)
#define ATTNPROF_HD __host__ __device__ __forceinline__
#else
#define ATTNPROF_HD inline
#endif

namespace attnprof::kernels {

enum class ScalarType : int { f32 = 0, f16 = 1, bf16 = 2 };

inline const char* to_string(ScalarType t) {
  switch (t) {
    case ScalarType::f32:
      return "fp32";
    case ScalarType::f16:
      return "fp16";
    case ScalarType::bf16:
      return "bf16";
  }
  return "?";
}

inline int element_size(ScalarType t) {
  return t == ScalarType::f32 ? 4 : 2;
}

// What a kernel entry point returns: ok, a configuration it does not support (a reason to skip,
// never a crash), or a failed runtime call (the call and its error string).
struct Status {
  enum class Code { ok, unsupported, error };
  Code code = Code::ok;
  std::string message;

  bool ok() const { return code == Code::ok; }
  static Status success() { return {}; }
  static Status unsupported(std::string why) { return {Code::unsupported, std::move(why)}; }
  static Status error(std::string what) { return {Code::error, std::move(what)}; }
};

struct AttentionParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  ScalarType dtype = ScalarType::f32;  // of q, k, v and o; accumulation is always fp32 or wider

  int batch = 0;
  int heads_q = 0;
  int heads_kv = 0;  // divides heads_q; query head h reads kv head h / (heads_q / heads_kv)
  int seq_q = 0;
  int seq_k = 0;
  int head_dim = 0;

  // Strides in elements (the head dimension's stride is 1).
  std::int64_t q_stride_b = 0, q_stride_h = 0, q_stride_s = 0;
  std::int64_t k_stride_b = 0, k_stride_h = 0, k_stride_s = 0;
  std::int64_t v_stride_b = 0, v_stride_h = 0, v_stride_s = 0;
  std::int64_t o_stride_b = 0, o_stride_h = 0, o_stride_s = 0;

  float scale = 0;  // softmax scale, usually 1/sqrt(head_dim)
  bool causal = false;
  int window = 0;  // sliding window; 0: none

  const int* seq_lens = nullptr;      // [B] valid keys per sequence; nullptr: all seq_k
  const float* mask = nullptr;        // additive [mask_batch, 1, seq_q, seq_k], contiguous
  int mask_batch = 1;                 // 1 (broadcast) or batch
  const int* cu_seqlens_q = nullptr;  // [B+1] packed query offsets; nullptr: padded batch
  const int* cu_seqlens_k = nullptr;  // [B+1] packed key/value offsets

  // For contiguous BHSD q, k, v and o, as the kernels' contract describes them.
  void set_contiguous_bhsd() {
    const std::int64_t d = head_dim;
    q_stride_s = d, q_stride_h = seq_q * d, q_stride_b = heads_q * q_stride_h;
    k_stride_s = d, k_stride_h = seq_k * d, k_stride_b = heads_kv * k_stride_h;
    v_stride_s = k_stride_s, v_stride_h = k_stride_h, v_stride_b = k_stride_b;
    o_stride_s = q_stride_s, o_stride_h = q_stride_h, o_stride_b = q_stride_b;
  }
};

// Where in the tensors sequence b lives and how long it is (resolves varlen vs padded).
struct SequenceView {
  std::int64_t q_offset, k_offset, v_offset, o_offset;  // element offsets of row 0, head 0
  int len_q, len_k;  // this sequence's query and key counts (before seq_lens padding)
  int key_limit;     // keys >= key_limit are padding
};

ATTNPROF_HD SequenceView sequence_view(const AttentionParams& p, int b) {
  SequenceView s;
  if (p.cu_seqlens_q) {
    const int start = p.cu_seqlens_q[b];
    s.len_q = p.cu_seqlens_q[b + 1] - start;
    s.q_offset = start * p.q_stride_s;
    s.o_offset = start * p.o_stride_s;
  } else {
    s.len_q = p.seq_q;
    s.q_offset = b * p.q_stride_b;
    s.o_offset = b * p.o_stride_b;
  }
  if (p.cu_seqlens_k) {
    const int start = p.cu_seqlens_k[b];
    s.len_k = p.cu_seqlens_k[b + 1] - start;
    s.k_offset = start * p.k_stride_s;
    s.v_offset = start * p.v_stride_s;
  } else {
    s.len_k = p.seq_k;
    s.k_offset = b * p.k_stride_b;
    s.v_offset = b * p.v_stride_b;
  }
  s.key_limit = s.len_k;
  if (p.seq_lens && p.seq_lens[b] < s.key_limit)
    s.key_limit = p.seq_lens[b] < 0 ? 0 : p.seq_lens[b];
  return s;
}

// The half-open range [lo, hi) of keys query row i of a sequence may see under the structural
// rules (causal, window, padding); the custom additive mask applies on top, key by key. Every
// kernel iterates this range, so they agree on which keys exist.
struct KeyRange {
  int lo, hi;
};

ATTNPROF_HD KeyRange key_range(const AttentionParams& p, const SequenceView& s, int i) {
  KeyRange r{0, s.key_limit};
  if (p.causal || p.window > 0) {
    // Absolute position of query i. Prefill (as many queries as keys): position i, padding or
    // not. Decode against a KV cache: the queries are the sequence's last len_q tokens, so they
    // end at its valid length (seq_lens[b]), like FlashAttention's cache_seqlens; without
    // padding that is the usual bottom-right alignment.
    const int pos = (s.len_q == s.len_k ? 0 : s.key_limit - s.len_q) + i;
    if (pos + 1 < r.hi) r.hi = pos + 1;
    if (p.window > 0 && pos - p.window + 1 > r.lo) r.lo = pos - p.window + 1;
  }
  if (r.hi < r.lo) r.hi = r.lo;
  return r;
}

// Additive mask value for (b, i, j), 0 when there is no mask.
ATTNPROF_HD float mask_value(const AttentionParams& p, int b, int i, int j) {
  if (!p.mask) return 0.0f;
  const std::int64_t mb = p.mask_batch == 1 ? 0 : b;
  return p.mask[(mb * p.seq_q + i) * static_cast<std::int64_t>(p.seq_k) + j];
}

// nullptr when the shapes, masks and strides describe a problem every attnprof kernel can take;
// otherwise why not. Looks at no pointer but the optional ones' presence, so an adapter can ask
// before it has buffers. Kernel-specific limits (head_dim for CUDA flash, ...) come on top.
inline const char* check_shape(const AttentionParams& p) {
  if (p.batch <= 0 || p.heads_q <= 0 || p.heads_kv <= 0 || p.head_dim <= 0)
    return "batch, heads and head_dim must be positive";
  if (p.seq_q < 0 || p.seq_k < 0) return "sequence lengths must not be negative";
  if (p.heads_q % p.heads_kv != 0) return "heads_q must be a multiple of heads_kv (GQA)";
  if (p.window < 0) return "window must not be negative";
  if (p.mask && p.mask_batch != 1 && p.mask_batch != p.batch)
    return "mask_batch must be 1 or batch";
  if (p.mask && (p.cu_seqlens_q || p.cu_seqlens_k))
    return "a custom mask is not supported with packed (varlen) sequences";
  if (p.q_stride_s == 0 || p.k_stride_s == 0 || p.v_stride_s == 0 || p.o_stride_s == 0)
    return "strides are not set (call set_contiguous_bhsd() for contiguous BHSD tensors)";
  return nullptr;
}

// check_shape, and the four tensors are set.
inline const char* check_params(const AttentionParams& p) {
  if (!p.q || !p.k || !p.v || !p.o) return "q, k, v and o must all be set";
  return check_shape(p);
}

}  // namespace attnprof::kernels
