// cuda.flash / cuda.varlen: fused attention forward in the FlashAttention-2 manner, plain CUDA
// C++ (SIMT fp32 FMAs, no tensor cores: correctness first, and a baseline the harness can show
// against sdpa.flash).
//
// Grid (ceil(Sq / 64), Hq, B); a block of 4 warps owns 64 query rows of one head, 16 per warp.
// Q is staged once in shared memory as fp32, pre-multiplied by scale * log2(e) so the softmax
// uses exp2f. The block walks the keys its rows may see (causal, window and padding bound the
// range; tiles wholly outside are never loaded) in tiles of 32 keys:
//   - K and V tiles are staged in shared memory in the input dtype, rows padded so that 32
//     lanes reading 32 different rows hit 32 different banks;
//   - scores: lane c computes key c's score for the warp's 16 rows (Q read as broadcast float4);
//   - online softmax per row: the warp's max via shuffles, rescale of the running output by
//     exp2(m_old - m_new), probabilities to a per-warp shared buffer;
//   - PV: lane owns head_dim / 32 output columns of each of its rows, in registers.
// The running sum l is kept per lane (its keys only) and summed across the warp at the end,
// which is exact because every lane rescales by the same factor. A row that sees no key
// writes zeros. With cu_seqlens set (varlen) Sq is the longest sequence; blocks past a
// sequence's end exit at once.
#include <cmath>
#include <string>

#include "kernels/cuda/common.cuh"

namespace attnprof::kernels::cuda {
namespace {

constexpr int BR = flash_block_q;  // query rows per block
constexpr int BC = flash_block_k;  // keys per tile (= lanes of a warp)
constexpr int NW = 4;              // warps per block
constexpr int NT = NW * 32;
constexpr int ROWS = BR / NW;      // query rows per warp
static_assert(BC == 32, "a lane owns one key of a tile");

// Row stride of the K/V tiles in elements: an odd number of 4-byte words, so lane c reading
// row c's word w lands in bank (c * stride + w) % 32, all different.
template <typename T, int D>
constexpr int tile_stride() {
  return sizeof(T) == 4 ? D + 1 : D + 2;
}

template <typename T, int D>
constexpr std::size_t flash_smem_bytes() {
  return sizeof(float) * BR * D                            // Q
         + 2 * sizeof(T) * BC * tile_stride<T, D>()        // K, V
         + sizeof(float) * NW * ROWS * BC;                 // P, per warp
}

template <typename T, int D>
__global__ void __launch_bounds__(NT) flash_kernel(const AttentionParams p) {
  constexpr int DPL = D / 32;  // output columns per lane
  constexpr int KS = tile_stride<T, D>();
  extern __shared__ __align__(16) unsigned char smem[];
  float* Qs = reinterpret_cast<float*>(smem);          // [BR][D]
  T* Ks = reinterpret_cast<T*>(Qs + BR * D);           // [BC][KS]
  T* Vs = Ks + BC * KS;                                // [BC][KS]
  float* Ps = reinterpret_cast<float*>(Vs + BC * KS);  // [NW][ROWS][BC]

  const int b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * BR;
  const SequenceView sv = sequence_view(p, b);
  if (q0 >= sv.len_q) return;  // varlen: this sequence is shorter
  const int hk = h / (p.heads_q / p.heads_kv);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const T* qg = static_cast<const T*>(p.q) + sv.q_offset + h * p.q_stride_h;
  const T* kg = static_cast<const T*>(p.k) + sv.k_offset + hk * p.k_stride_h;
  const T* vg = static_cast<const T*>(p.v) + sv.v_offset + hk * p.v_stride_h;
  T* og = static_cast<T*>(p.o) + sv.o_offset + h * p.o_stride_h;

  const float qscale = p.scale * log2e;
  for (int idx = threadIdx.x; idx < BR * D; idx += NT) {
    const int r = idx / D, d = idx % D, i = q0 + r;
    Qs[idx] = i < sv.len_q ? to_float(qg[i * p.q_stride_s + d]) * qscale : 0.0f;
  }
  // Key ranges grow with the row (both ends), so the block's keys are [first.lo, last.hi).
  const int last_row = min(q0 + BR, sv.len_q) - 1;
  const int lo = key_range(p, sv, q0).lo;
  const int hi = min(key_range(p, sv, last_row).hi, sv.key_limit);

  const int row0 = q0 + warp * ROWS;  // this warp's first query row
  float o[ROWS][DPL], m[ROWS], l[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    m[r] = -INFINITY, l[r] = 0.0f;
#pragma unroll
    for (int e = 0; e < DPL; ++e) o[r][e] = 0.0f;
  }
  float* Pw = Ps + warp * ROWS * BC;
  const float* Qw = Qs + warp * ROWS * D;

  for (int k0 = lo; k0 < hi; k0 += BC) {
    __syncthreads();  // Q staged (first tile) / the previous tile's K, V no longer read
    for (int idx = threadIdx.x; idx < BC * D; idx += NT) {
      const int c = idx / D, d = idx % D, j = k0 + c;
      Ks[c * KS + d] = j < hi ? kg[j * p.k_stride_s + d] : from_float<T>(0.0f);
      Vs[c * KS + d] = j < hi ? vg[j * p.v_stride_s + d] : from_float<T>(0.0f);
    }
    __syncthreads();

    float s[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) s[r] = 0.0f;
    const T* kr = Ks + lane * KS;
#pragma unroll 2
    for (int d = 0; d < D; d += 4) {
      const float k0f = to_float(kr[d]), k1f = to_float(kr[d + 1]);
      const float k2f = to_float(kr[d + 2]), k3f = to_float(kr[d + 3]);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float4 q4 = *reinterpret_cast<const float4*>(Qw + r * D + d);
        s[r] += q4.x * k0f + q4.y * k1f + q4.z * k2f + q4.w * k3f;
      }
    }

    const int j = k0 + lane;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const int i = row0 + r;
      float x = -INFINITY;
      if (i < sv.len_q) {
        const KeyRange kr2 = key_range(p, sv, i);
        if (j >= kr2.lo && j < kr2.hi) x = s[r] + mask_value(p, b, i, j) * log2e;
      }
      const float mn = fmaxf(m[r], warp_max(x));
      float pr = 0.0f, alpha = 1.0f;
      if (mn != -INFINITY) {  // warp-uniform: mn is the same in every lane
        alpha = exp2f(m[r] - mn);  // 0 while the row had seen nothing (m = -inf)
        pr = exp2f(x - mn);
      }
      m[r] = mn;
      l[r] = l[r] * alpha + pr;
#pragma unroll
      for (int e = 0; e < DPL; ++e) o[r][e] *= alpha;
      Pw[r * BC + lane] = pr;
    }
    __syncwarp();

#pragma unroll 2
    for (int c = 0; c < BC; c += 4) {
      float v[4][DPL];
#pragma unroll
      for (int cc = 0; cc < 4; ++cc)
#pragma unroll
        for (int e = 0; e < DPL; ++e) v[cc][e] = to_float(Vs[(c + cc) * KS + lane * DPL + e]);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float4 p4 = *reinterpret_cast<const float4*>(Pw + r * BC + c);
#pragma unroll
        for (int e = 0; e < DPL; ++e)
          o[r][e] += p4.x * v[0][e] + p4.y * v[1][e] + p4.z * v[2][e] + p4.w * v[3][e];
      }
    }
    __syncwarp();  // Pw is rewritten by the next tile
  }

#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const float L = warp_sum(l[r]);
    const int i = row0 + r;
    if (i >= sv.len_q) continue;
    const float inv = L > 0.0f ? 1.0f / L : 0.0f;  // a row that saw no key: zeros
#pragma unroll
    for (int e = 0; e < DPL; ++e) og[i * p.o_stride_s + lane * DPL + e] = from_float<T>(o[r][e] * inv);
  }
}

template <typename T, int D>
Status launch_flash(const AttentionParams& p, cudaStream_t stream) {
  constexpr std::size_t smem = flash_smem_bytes<T, D>();
  // Above 48 KB a block's dynamic shared memory must be allowed explicitly (every sm_80+ part
  // has at least 99 KB per block).
  ATTNPROF_CUDA_TRY(cudaFuncSetAttribute(flash_kernel<T, D>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem)));
  const dim3 grid((p.seq_q + BR - 1) / BR, p.heads_q, p.batch);
  flash_kernel<T, D><<<grid, NT, smem, stream>>>(p);
  ATTNPROF_CUDA_LAUNCHED("flash_kernel");
  return Status::success();
}

}  // namespace

Status flash_supports(const AttentionParams& p) {
  if (const char* why = check_shape(p)) return Status::unsupported(why);
  if (p.head_dim != 64 && p.head_dim != 128)
    return Status::unsupported("cuda.flash: head_dim " + std::to_string(p.head_dim) +
                               " not in {64, 128}");
  if (p.heads_q > 65535 || p.batch > 65535)
    return Status::unsupported("cuda.flash: heads_q and batch must be at most 65535 (grid)");
  return Status::success();
}

Status flash_forward(const AttentionParams& p, cudaStream_t stream) {
  if (const char* why = check_params(p)) return Status::unsupported(why);
  if (Status s = flash_supports(p); !s.ok()) return s;
  if (p.seq_q == 0) return Status::success();
  return dispatch_dtype(p.dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    return p.head_dim == 64 ? launch_flash<T, 64>(p, stream) : launch_flash<T, 128>(p, stream);
  });
}

Status varlen_forward(const AttentionParams& p, cudaStream_t stream) {
  if (!p.cu_seqlens_q || !p.cu_seqlens_k)
    return Status::unsupported("cuda.varlen: cu_seqlens_q and cu_seqlens_k must be set");
  return flash_forward(p, stream);
}

}  // namespace attnprof::kernels::cuda
