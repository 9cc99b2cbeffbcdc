// cuda.naive: attention as three kernels through a materialized score matrix, the way an
// unfused framework runs it (and the memory traffic the cost matrix should show):
//   1. scores_kernel   S[b,h,i,j] = (q_i . k_j) * scale + mask, -inf outside the key range
//                      (16x16 output tiles, Q and K chunks staged in shared memory);
//   2. softmax_kernel  one block per row, in place; a row with no visible key becomes zeros;
//   3. pv_kernel       O = P V (16x16 output tiles over D), written in the input dtype.
// The workspace is B * Hq * Sq * Sk floats (naive_workspace_bytes); Sq and Sk are the longest
// sequences when packed (varlen), shorter sequences leave their tail of S unused.
#include <cmath>

#include "kernels/cuda/common.cuh"

namespace attnprof::kernels::cuda {
namespace {

constexpr int TILE = 16;

template <typename T>
__global__ void scores_kernel(const AttentionParams p, float* __restrict__ S) {
  const int b = blockIdx.z / p.heads_q, h = blockIdx.z % p.heads_q;
  const int hk = h / (p.heads_q / p.heads_kv);
  const SequenceView sv = sequence_view(p, b);
  const int i = blockIdx.y * TILE + threadIdx.y;  // query row
  const int j = blockIdx.x * TILE + threadIdx.x;  // key
  const T* q = static_cast<const T*>(p.q) + sv.q_offset + h * p.q_stride_h;
  const T* k = static_cast<const T*>(p.k) + sv.k_offset + hk * p.k_stride_h;
  __shared__ float qs[TILE][TILE + 1], ks[TILE][TILE + 1];
  const int qi = blockIdx.y * TILE + threadIdx.y;  // row of Q this thread stages
  const int kj = blockIdx.x * TILE + threadIdx.y;  // row of K this thread stages
  float acc = 0;
  for (int d0 = 0; d0 < p.head_dim; d0 += TILE) {
    const int d = d0 + threadIdx.x;
    qs[threadIdx.y][threadIdx.x] =
        qi < sv.len_q && d < p.head_dim ? to_float(q[qi * p.q_stride_s + d]) : 0.0f;
    ks[threadIdx.y][threadIdx.x] =
        kj < sv.len_k && d < p.head_dim ? to_float(k[kj * p.k_stride_s + d]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int t = 0; t < TILE; ++t) acc += qs[threadIdx.y][t] * ks[threadIdx.x][t];
    __syncthreads();
  }
  if (i >= p.seq_q || j >= p.seq_k) return;
  float s = -INFINITY;
  if (i < sv.len_q) {
    const KeyRange r = key_range(p, sv, i);
    if (j >= r.lo && j < r.hi) s = acc * p.scale + mask_value(p, b, i, j);
  }
  S[(static_cast<std::int64_t>(blockIdx.z) * p.seq_q + i) * p.seq_k + j] = s;
}

__global__ void softmax_kernel(const AttentionParams p, float* __restrict__ S) {
  float* row = S + static_cast<std::int64_t>(blockIdx.x) * p.seq_k;
  __shared__ float red[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  auto block_reduce = [&](float x, bool is_max) {
    x = is_max ? warp_max(x) : warp_sum(x);
    __syncthreads();  // red[] may still be read from the previous reduction
    if (lane == 0) red[warp] = x;
    __syncthreads();
    x = lane < warps ? red[lane] : (is_max ? -INFINITY : 0.0f);
    return is_max ? warp_max(x) : warp_sum(x);
  };
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < p.seq_k; j += blockDim.x) mx = fmaxf(mx, row[j]);
  mx = block_reduce(mx, true);
  if (mx == -INFINITY) {  // the row sees no key
    for (int j = threadIdx.x; j < p.seq_k; j += blockDim.x) row[j] = 0.0f;
    return;
  }
  float sum = 0;
  for (int j = threadIdx.x; j < p.seq_k; j += blockDim.x) {
    const float e = expf(row[j] - mx);
    row[j] = e;
    sum += e;
  }
  const float inv = 1.0f / block_reduce(sum, false);
  for (int j = threadIdx.x; j < p.seq_k; j += blockDim.x) row[j] *= inv;
}

template <typename T>
__global__ void pv_kernel(const AttentionParams p, const float* __restrict__ P) {
  const int b = blockIdx.z / p.heads_q, h = blockIdx.z % p.heads_q;
  const int hk = h / (p.heads_q / p.heads_kv);
  const SequenceView sv = sequence_view(p, b);
  const int i = blockIdx.y * TILE + threadIdx.y;  // query row
  const int d = blockIdx.x * TILE + threadIdx.x;  // output dimension
  const T* v = static_cast<const T*>(p.v) + sv.v_offset + hk * p.v_stride_h;
  const float* prow = P + static_cast<std::int64_t>(blockIdx.z) * p.seq_q * p.seq_k;
  __shared__ float ps[TILE][TILE + 1], vs[TILE][TILE + 1];
  float acc = 0;
  for (int j0 = 0; j0 < sv.len_k; j0 += TILE) {
    const int j = j0 + threadIdx.x, vj = j0 + threadIdx.y;
    ps[threadIdx.y][threadIdx.x] =
        i < sv.len_q && j < sv.len_k ? prow[static_cast<std::int64_t>(i) * p.seq_k + j] : 0.0f;
    vs[threadIdx.y][threadIdx.x] =
        vj < sv.len_k && d < p.head_dim ? to_float(v[vj * p.v_stride_s + d]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int t = 0; t < TILE; ++t) acc += ps[threadIdx.y][t] * vs[t][threadIdx.x];
    __syncthreads();
  }
  if (i < sv.len_q && d < p.head_dim) {
    T* o = static_cast<T*>(p.o) + sv.o_offset + h * p.o_stride_h;
    o[i * p.o_stride_s + d] = from_float<T>(acc);
  }
}

}  // namespace

std::size_t naive_workspace_bytes(const AttentionParams& p) {
  return sizeof(float) * static_cast<std::size_t>(p.batch) * p.heads_q * p.seq_q * p.seq_k;
}

Status naive_supports(const AttentionParams& p) {
  if (const char* why = check_shape(p)) return Status::unsupported(why);
  if (static_cast<std::int64_t>(p.batch) * p.heads_q > 65535)
    return Status::unsupported("cuda.naive: batch * heads_q above 65535 (grid z)");
  return Status::success();
}

Status naive_forward(const AttentionParams& p, void* workspace, cudaStream_t stream) {
  if (const char* why = check_params(p)) return Status::unsupported(why);
  if (Status s = naive_supports(p); !s.ok()) return s;
  if (!workspace && naive_workspace_bytes(p) > 0)
    return Status::unsupported("cuda.naive: no workspace (naive_workspace_bytes)");
  if (p.seq_q == 0) return Status::success();
  float* S = static_cast<float*>(workspace);
  const dim3 block(TILE, TILE);
  const unsigned bh = static_cast<unsigned>(p.batch * p.heads_q);
  return dispatch_dtype(p.dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    if (p.seq_k > 0) {  // with no keys at all, pv_kernel alone writes the zeros
      scores_kernel<T><<<dim3((p.seq_k + TILE - 1) / TILE, (p.seq_q + TILE - 1) / TILE, bh),
                         block, 0, stream>>>(p, S);
      ATTNPROF_CUDA_LAUNCHED("scores_kernel");
      softmax_kernel<<<static_cast<unsigned>(bh * p.seq_q), 128, 0, stream>>>(p, S);
      ATTNPROF_CUDA_LAUNCHED("softmax_kernel");
    }
    pv_kernel<T><<<dim3((p.head_dim + TILE - 1) / TILE, (p.seq_q + TILE - 1) / TILE, bh), block,
                   0, stream>>>(p, S);
    ATTNPROF_CUDA_LAUNCHED("pv_kernel");
    return Status::success();
  });
}

}  // namespace attnprof::kernels::cuda
