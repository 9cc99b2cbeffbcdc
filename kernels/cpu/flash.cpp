// Tiled attention forward with online softmax (FlashAttention-2's loop order on a CPU): a work
// item is (batch, query head, block of flash_block_q query rows); it walks the keys that block
// may see in steps of flash_block_k, keeping a running max m, running sum l and an unnormalized
// output per row, so the [Sq, Sk] score matrix never exists. Inputs are converted to fp32 tile
// by tile; K is stored transposed in its tile so both matrix products have a contiguous,
// fixed-length inner loop that GCC vectorizes at -O3 without -march or -ffast-math (no
// reassociated reductions). On x86-64 the tile routine is also cloned for AVX2+FMA and picked
// at load time (target_clones), so a baseline build still uses the wider units where present.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/convert.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define ATTNPROF_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ATTNPROF_CPU_CLONES
#endif

namespace attnprof::kernels::cpu {
namespace {

constexpr int BQ = flash_block_q;
constexpr int BK = flash_block_k;
constexpr float neg_inf = -std::numeric_limits<float>::infinity();

// One thread's tiles, fp32.
struct Scratch {
  explicit Scratch(int d)
      : q(BQ * d), kt(static_cast<size_t>(d) * BK), v(BK * d), s(BQ * BK), o(BQ * d) {}
  std::vector<float> q;   // [BQ][D], pre-multiplied by the softmax scale
  std::vector<float> kt;  // [D][BK], K transposed
  std::vector<float> v;   // [BK][D]
  std::vector<float> s;   // [BQ][BK] scores, then probabilities
  std::vector<float> o;   // [BQ][D] unnormalized output
  float m[BQ], l[BQ];
  int lo[BQ], hi[BQ];
};

// S = Q Kt for `rows` query rows against one key tile (all BK columns; columns past the tile's
// end hold zeros in kt and are masked by the caller).
ATTNPROF_CPU_CLONES void tile_scores(const float* __restrict q, const float* __restrict kt,
                                     float* __restrict s, int rows, int D) {
  for (int r = 0; r < rows; ++r) {
    float acc[BK] = {};
    const float* qr = q + r * D;
    for (int d = 0; d < D; ++d) {
      const float qv = qr[d];
      const float* kr = kt + d * BK;
      for (int c = 0; c < BK; ++c) acc[c] += qv * kr[c];
    }
    for (int c = 0; c < BK; ++c) s[r * BK + c] = acc[c];
  }
}

// O[r] = O[r] * alpha[r] + P[r] V for the tile's `cols` keys.
ATTNPROF_CPU_CLONES void tile_update(const float* __restrict pr, const float* __restrict v,
                                     float* __restrict o, int cols, int D) {
  for (int c = 0; c < cols; ++c) {
    const float w = pr[c];
    if (w == 0.0f) continue;  // masked keys: common under causal and window masks
    const float* vr = v + c * D;
    for (int d = 0; d < D; ++d) o[d] += w * vr[d];
  }
}

void run_block(const AttentionParams& p, int b, int h, int q0, Scratch& t) {
  const int D = p.head_dim;
  const SequenceView sv = sequence_view(p, b);
  const int rows = std::min(BQ, sv.len_q - q0);
  if (rows <= 0) return;
  const int hk = h / (p.heads_q / p.heads_kv);

  int lo = std::numeric_limits<int>::max(), hi = 0;
  for (int r = 0; r < rows; ++r) {
    const KeyRange kr = key_range(p, sv, q0 + r);
    t.lo[r] = kr.lo, t.hi[r] = kr.hi;
    if (kr.lo < kr.hi) lo = std::min(lo, kr.lo), hi = std::max(hi, kr.hi);
    t.m[r] = neg_inf, t.l[r] = 0;
    load_row(p.q, p.dtype, sv.q_offset + h * p.q_stride_h + (q0 + r) * p.q_stride_s, D,
             t.q.data() + r * D, p.scale);
  }
  std::fill(t.o.begin(), t.o.begin() + rows * D, 0.0f);

  std::vector<float>& krow = t.s;  // free until the scores are computed; holds one key row
  for (int k0 = lo; k0 < hi; k0 += BK) {
    const int cols = std::min(BK, hi - k0);
    for (int c = 0; c < cols; ++c) {
      load_row(p.k, p.dtype, sv.k_offset + hk * p.k_stride_h + (k0 + c) * p.k_stride_s, D,
               krow.data());
      for (int d = 0; d < D; ++d) t.kt[d * BK + c] = krow[d];
      load_row(p.v, p.dtype, sv.v_offset + hk * p.v_stride_h + (k0 + c) * p.v_stride_s, D,
               t.v.data() + c * D);
    }
    for (int c = cols; c < BK; ++c)
      for (int d = 0; d < D; ++d) t.kt[d * BK + c] = 0.0f;

    tile_scores(t.q.data(), t.kt.data(), t.s.data(), rows, D);

    for (int r = 0; r < rows; ++r) {
      float* sr = t.s.data() + r * BK;
      // Keys outside this row's range (or past the tile's end) get -inf; the rest the custom
      // mask's additive value.
      const int clo = std::clamp(t.lo[r] - k0, 0, cols), chi = std::clamp(t.hi[r] - k0, 0, cols);
      for (int c = 0; c < clo; ++c) sr[c] = neg_inf;
      for (int c = chi; c < BK; ++c) sr[c] = neg_inf;
      if (p.mask)
        for (int c = clo; c < chi; ++c) sr[c] += mask_value(p, b, q0 + r, k0 + c);
      float mx = t.m[r];
      for (int c = clo; c < chi; ++c) mx = std::max(mx, sr[c]);
      if (mx == neg_inf) {  // nothing visible yet in this row
        for (int c = 0; c < BK; ++c) sr[c] = 0.0f;
        continue;
      }
      const float alpha = std::exp(t.m[r] - mx);  // exp(-inf) = 0 on the row's first keys
      float sum = 0;
      for (int c = 0; c < BK; ++c) {
        sr[c] = std::exp(sr[c] - mx);
        sum += sr[c];
      }
      t.l[r] = t.l[r] * alpha + sum;
      t.m[r] = mx;
      float* orow = t.o.data() + r * D;
      if (alpha != 1.0f)
        for (int d = 0; d < D; ++d) orow[d] *= alpha;
      tile_update(sr, t.v.data(), orow, cols, D);
    }
  }

  for (int r = 0; r < rows; ++r) {
    float* orow = t.o.data() + r * D;
    const float inv = t.l[r] > 0 ? 1.0f / t.l[r] : 0.0f;  // a row that saw no key: zeros
    for (int d = 0; d < D; ++d) orow[d] *= inv;
    store_row(p.o, p.dtype, sv.o_offset + h * p.o_stride_h + (q0 + r) * p.o_stride_s, D, orow);
  }
}

}  // namespace

Status flash_forward(const AttentionParams& p, int threads) {
  if (const char* why = check_params(p)) return Status::unsupported(why);
  const int q_blocks = (p.seq_q + BQ - 1) / BQ;
  const long items = static_cast<long>(p.batch) * p.heads_q * q_blocks;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<long>(threads, std::max(1L, items)));

  // Work items in (batch, head, query block) order, handed out by an atomic counter: causal
  // blocks differ in cost, so static chunks would leave threads idle.
  std::atomic<long> next{0};
  auto worker = [&] {
    Scratch t(p.head_dim);
    for (long item = next++; item < items; item = next++) {
      const int qb = static_cast<int>(item % q_blocks);
      const long bh = item / q_blocks;
      run_block(p, static_cast<int>(bh / p.heads_q), static_cast<int>(bh % p.heads_q), qb * BQ, t);
    }
  };
  if (threads == 1) {
    worker();
    return Status::success();
  }
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  return Status::success();
}

}  // namespace attnprof::kernels::cpu
