// cuda.decode: flash-decoding for a few queries (Sq <= 16) against a long KV cache.
//
// One (batch, head) has too little work to fill a GPU, so its keys are split in `splits`
// chunks, one block each: grid (splits, Hq, B), 4 warps. Within a block, a group of
// head_dim / (16 / sizeof(T)) lanes owns one key at a time: each lane loads 16 bytes of the key
// (and of its value), the group sums the dot product with shuffles, and keeps its own online
// softmax state (max, sum, its slice of the output). The groups of the block are merged in
// shared memory, and the block writes its chunk's partial result (fp32 output scaled by
// exp2(-max), max, sum) to the workspace; decode_combine_kernel merges the chunks and writes O.
// Rows of a query block that see no key (a chunk past the sequence's length) write max = -inf
// and drop out of the merge; a row with no key at all gets zeros.
#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/cuda/common.cuh"

namespace attnprof::kernels::cuda {
namespace {

constexpr int NW = 4;
constexpr int NT = NW * 32;

template <typename T, int D>
struct DecodeShape {
  static constexpr int vec = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte load
  static constexpr int lanes_per_key = D / vec;
  static constexpr int keys_per_warp = 32 / lanes_per_key;
  static constexpr int groups = NW * keys_per_warp;  // keys in flight per block
  static_assert(lanes_per_key >= 1 && lanes_per_key <= 32 && 32 % lanes_per_key == 0);
};

template <typename T, int D>
__global__ void __launch_bounds__(NT)
    decode_split_kernel(const AttentionParams p, int chunk, float* __restrict__ part_o,
                        float* __restrict__ part_ml) {
  using S = DecodeShape<T, D>;
  constexpr int VEC = S::vec, LPK = S::lanes_per_key, G = S::groups;
  __shared__ float sm_m[G], sm_l[G];
  __shared__ float sm_o[G][D];

  const int split = blockIdx.x, splits = gridDim.x, h = blockIdx.y, b = blockIdx.z;
  const SequenceView sv = sequence_view(p, b);
  const int hk = h / (p.heads_q / p.heads_kv);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int group = warp * S::keys_per_warp + lane / LPK, sub = lane % LPK;
  const T* qg = static_cast<const T*>(p.q) + sv.q_offset + h * p.q_stride_h + sub * VEC;
  const T* kg = static_cast<const T*>(p.k) + sv.k_offset + hk * p.k_stride_h + sub * VEC;
  const T* vg = static_cast<const T*>(p.v) + sv.v_offset + hk * p.v_stride_h + sub * VEC;
  const float qscale = p.scale * log2e;

  for (int i = 0; i < sv.len_q; ++i) {
    const KeyRange r = key_range(p, sv, i);
    const int lo = max(r.lo, split * chunk), hi = min(r.hi, (split + 1) * chunk);
    float qf[VEC];
    {
      const uint4 raw = *reinterpret_cast<const uint4*>(qg + i * p.q_stride_s);
      const T* qv = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int e = 0; e < VEC; ++e) qf[e] = to_float(qv[e]) * qscale;
    }
    float m = -INFINITY, l = 0.0f, o[VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) o[e] = 0.0f;
    // The same trip count in every lane: the shuffles need the whole warp.
    const int steps = hi > lo ? (hi - lo + G - 1) / G : 0;
#pragma unroll 2
    for (int t = 0; t < steps; ++t) {
      const int j = lo + t * G + group;
      const bool valid = j < hi;
      const int jj = valid ? j : lo;  // an address inside the cache for the idle groups
      const uint4 kraw = *reinterpret_cast<const uint4*>(kg + jj * p.k_stride_s);
      const uint4 vraw = *reinterpret_cast<const uint4*>(vg + jj * p.v_stride_s);
      const T* kv = reinterpret_cast<const T*>(&kraw);
      const T* vv = reinterpret_cast<const T*>(&vraw);
      float dot = 0.0f;
#pragma unroll
      for (int e = 0; e < VEC; ++e) dot += qf[e] * to_float(kv[e]);
#pragma unroll
      for (int off = LPK / 2; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
      const float x = valid ? dot + mask_value(p, b, i, j) * log2e : -INFINITY;
      const float mn = fmaxf(m, x);
      if (mn != -INFINITY) {
        const float alpha = exp2f(m - mn), pr = exp2f(x - mn);
        l = l * alpha + pr;
#pragma unroll
        for (int e = 0; e < VEC; ++e) o[e] = o[e] * alpha + pr * to_float(vv[e]);
        m = mn;
      }
    }

    if (sub == 0) sm_m[group] = m, sm_l[group] = l;
#pragma unroll
    for (int e = 0; e < VEC; ++e) sm_o[group][sub * VEC + e] = o[e];
    __syncthreads();
    float M = -INFINITY;
#pragma unroll
    for (int g = 0; g < G; ++g) M = fmaxf(M, sm_m[g]);
    const std::int64_t slot =
        ((static_cast<std::int64_t>(b) * p.heads_q + h) * p.seq_q + i) * splits + split;
    for (int d = threadIdx.x; d < D; d += NT) {
      float acc = 0.0f, L = 0.0f;
      if (M != -INFINITY)
        for (int g = 0; g < G; ++g) {
          const float w = exp2f(sm_m[g] - M);  // 0 for groups that saw nothing
          acc += sm_o[g][d] * w;
          L += sm_l[g] * w;
        }
      part_o[slot * D + d] = acc;
      if (d == 0) part_ml[slot * 2] = M, part_ml[slot * 2 + 1] = L;
    }
    __syncthreads();  // sm_* are reused by the next query row
  }
}

template <typename T, int D>
__global__ void decode_combine_kernel(const AttentionParams p, int splits,
                                      const float* __restrict__ part_o,
                                      const float* __restrict__ part_ml) {
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z, d = threadIdx.x;
  const SequenceView sv = sequence_view(p, b);
  if (i >= sv.len_q) return;
  const std::int64_t base = ((static_cast<std::int64_t>(b) * p.heads_q + h) * p.seq_q + i) * splits;
  float M = -INFINITY;
  for (int s = 0; s < splits; ++s) M = fmaxf(M, part_ml[(base + s) * 2]);
  float acc = 0.0f, L = 0.0f;
  if (M != -INFINITY)
    for (int s = 0; s < splits; ++s) {
      const float w = exp2f(part_ml[(base + s) * 2] - M);
      L += part_ml[(base + s) * 2 + 1] * w;
      acc += part_o[(base + s) * D + d] * w;
    }
  T* og = static_cast<T*>(p.o) + sv.o_offset + h * p.o_stride_h;
  og[i * p.o_stride_s + d] = from_float<T>(L > 0.0f ? acc / L : 0.0f);
}

template <typename T, int D>
Status launch_decode(const AttentionParams& p, int splits, void* workspace, cudaStream_t stream) {
  float* part_o = static_cast<float*>(workspace);
  float* part_ml = part_o + static_cast<std::size_t>(p.batch) * p.heads_q * p.seq_q * splits * D;
  const int chunk = (p.seq_k + splits - 1) / splits;
  decode_split_kernel<T, D><<<dim3(splits, p.heads_q, p.batch), NT, 0, stream>>>(p, chunk, part_o,
                                                                                  part_ml);
  ATTNPROF_CUDA_LAUNCHED("decode_split_kernel");
  decode_combine_kernel<T, D><<<dim3(p.seq_q, p.heads_q, p.batch), D, 0, stream>>>(p, splits,
                                                                                    part_o, part_ml);
  ATTNPROF_CUDA_LAUNCHED("decode_combine_kernel");
  return Status::success();
}

bool aligned16(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

}  // namespace

Status decode_supports(const AttentionParams& p) {
  if (const char* why = check_shape(p)) return Status::unsupported(why);
  if (p.seq_q > decode_max_seq_q)
    return Status::unsupported("cuda.decode: seq_q " + std::to_string(p.seq_q) +
                               " above " + std::to_string(decode_max_seq_q) +
                               " (a decode kernel; use cuda.flash for prefill)");
  if (p.head_dim != 64 && p.head_dim != 128)
    return Status::unsupported("cuda.decode: head_dim " + std::to_string(p.head_dim) +
                               " not in {64, 128}");
  if (p.heads_q > 65535 || p.batch > 65535)
    return Status::unsupported("cuda.decode: heads_q and batch must be at most 65535 (grid)");
  // Rows are read 16 bytes at a time.
  const std::int64_t vec = 16 / element_size(p.dtype);
  for (std::int64_t s : {p.q_stride_b, p.q_stride_h, p.q_stride_s, p.k_stride_b, p.k_stride_h,
                         p.k_stride_s, p.v_stride_b, p.v_stride_h, p.v_stride_s})
    if (s % vec != 0)
      return Status::unsupported("cuda.decode: q, k and v strides must be multiples of 16 bytes");
  return Status::success();
}

int decode_splits(const AttentionParams& p, int sm_count) {
  const long blocks = std::max(1L, static_cast<long>(p.batch) * p.heads_q);
  const long want = (2L * std::max(1, sm_count) + blocks - 1) / blocks;
  const long most = std::max(1, p.seq_k / 128);
  return static_cast<int>(std::clamp(std::min(want, most), 1L, 64L));
}

std::size_t decode_workspace_bytes(const AttentionParams& p, int splits) {
  return sizeof(float) * static_cast<std::size_t>(p.batch) * p.heads_q * p.seq_q * splits *
         (p.head_dim + 2);
}

Status decode_forward(const AttentionParams& p, int splits, void* workspace, cudaStream_t stream) {
  if (const char* why = check_params(p)) return Status::unsupported(why);
  if (Status s = decode_supports(p); !s.ok()) return s;
  if (splits < 1) return Status::unsupported("cuda.decode: splits must be at least 1");
  if (!aligned16(p.q) || !aligned16(p.k) || !aligned16(p.v))
    return Status::unsupported("cuda.decode: q, k and v must be 16-byte aligned");
  if (!workspace) return Status::unsupported("cuda.decode: no workspace (decode_workspace_bytes)");
  if (p.seq_q == 0) return Status::success();
  return dispatch_dtype(p.dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    return p.head_dim == 64 ? launch_decode<T, 64>(p, splits, workspace, stream)
                            : launch_decode<T, 128>(p, splits, workspace, stream);
  });
}

}  // namespace attnprof::kernels::cuda
