// Tiled attention forward with online softmax (FlashAttention-2's loop order on a CPU), with
// SIMD tile routines. Run alone: tests/unit/test_cpu_flash.cpp checks it against naive_forward;
// bench/bench_torch_kernels times it against LibTorch's fused CPU SDPA.
//
// A work item is (batch, kv head, a run of query positions): its rows are every query head of
// the kv head's GQA group at each of those positions, so K and V are read and converted once
// per kv head and serve the whole group. The item walks the keys its rows may see in tiles of
// BK keys, keeping per row a running max m, a running sum l and an unnormalized output, so the
// [Sq, Sk] score matrix never exists. Per tile: K is packed transposed ([D][BK], fp32) so that
// S = Q Kt accumulates whole vectors of keys with no horizontal sums (items of a few rows, as
// in decode, take dot products on K's rows instead: packing would cost more than the rows use);
// P V reads V's rows in place when they are fp32 (else converted into the tile); exp runs on
// vectors.
//
// Tiles sit at multiples of BK whatever the item, and a tile a row cannot see leaves that row
// exactly as it was, so a row's result depends neither on the other rows of its item nor on
// the thread count.
//
// SIMD: GCC/Clang vector extensions, one template for every width, compiled three times: 128
// bits (the portable fallback: SSE2 on x86-64, NEON on aarch64), 256 bits with FMA (AVX2) and
// 512 bits (AVX-512F) behind target attributes, picked at run time from what the CPU reports.
// So the build needs no -march and runs on any x86-64 or aarch64 machine.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/convert.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ATTNPROF_X86_SIMD 1
#endif

namespace attnprof::kernels::cpu {

namespace {

std::atomic<std::int64_t> g_exited_wait_ns{0};

// This thread's run-queue wait over its life (the second field of its schedstat): the wait
// before it first ran included, which is most of what a busy machine costs a thread started per
// call. 0 where the kernel keeps no schedstat. One small read, off the caller's thread.
std::int64_t own_run_delay_ns() {
  const int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  unsigned long long on_cpu = 0, waited = 0;
  if (std::sscanf(buf, "%llu %llu", &on_cpu, &waited) != 2) return 0;
  return static_cast<std::int64_t>(waited);
}

}  // namespace

std::int64_t exited_threads_wait_ns() {
  return g_exited_wait_ns.load(std::memory_order_relaxed);
}
namespace {

constexpr int BK = flash_block_k;
// Items of at most this many rows compute scores from K's rows instead of a packed Kt tile.
constexpr int flash_direct_rows = 8;
constexpr float neg_inf = -std::numeric_limits<float>::infinity();

// Query positions per work item: enough rows (positions x group heads) that packing a K tile
// is paid for by many rows, few enough that a causal prefill still yields several items per
// thread. Fixed by the shape alone, never by the thread count (see the file comment).
int positions_per_item(const AttentionParams& p) {
  const int group = p.heads_q / p.heads_kv;
  return std::max(1, flash_item_rows / group);
}

// Float storage aligned for the widest vector; allocated once per thread per call.
struct Buffer {
  struct Free {
    void operator()(float* f) const { std::free(f); }
  };
  std::unique_ptr<float[], Free> data;
  explicit Buffer(std::size_t n)
      : data(static_cast<float*>(std::aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64))) {
    if (!data) throw std::bad_alloc();
  }
  float* get() const { return data.get(); }
};

// One thread's state for one item; sized for the largest item once, reused for every item.
struct Scratch {
  Scratch(int rows, int d)
      : q(static_cast<std::size_t>(rows) * d),
        o(static_cast<std::size_t>(rows) * d),
        s(static_cast<std::size_t>(rows) * BK),
        kt(static_cast<std::size_t>(d) * BK),
        v(static_cast<std::size_t>(BK) * d),
        m(rows),
        l(rows),
        krow(d),
        lo(rows),
        hi(rows),
        active(rows) {}
  Buffer q;   // [rows][D], times the softmax scale
  Buffer o;   // [rows][D], unnormalized output
  Buffer s;   // [rows][BK], scores, then probabilities
  Buffer kt;  // [D][BK], the tile's keys transposed; direct items: [BK][D], its rows as fp32
  Buffer v;   // [BK][D], the tile's values when they are not fp32
  Buffer m, l, krow;
  std::vector<int> lo, hi;  // each row's visible keys
  std::vector<char> active;
};

// The item's rows: row r is query head kv_head * group + r % group at position pos0 + r / group.
struct Item {
  int b, hk, pos0, rows;
};

template <int W>
struct Lanes {
  typedef float V __attribute__((vector_size(4 * W)));
  typedef std::int32_t I __attribute__((vector_size(4 * W)));
  // Vectors per register block: as many accumulators as the register file holds with room for
  // the operands (16 registers up to AVX2, 32 with AVX-512).
  static constexpr int NC = W >= 16 ? 4 : 2;
  static constexpr int NR = 4;  // rows per register block
};

#define ATTNPROF_INLINE [[gnu::always_inline]] inline

template <class V>
ATTNPROF_INLINE V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class V>
ATTNPROF_INLINE void store(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

template <class V>
ATTNPROF_INLINE V splat(float x) {
  return V{} + x;
}

template <int W, class V>
ATTNPROF_INLINE float hsum(V v) {
  float s = 0;
  for (int i = 0; i < W; ++i) s += v[i];
  return s;
}

template <int W, class V>
ATTNPROF_INLINE float hmax(V v) {
  float s = v[0];
  for (int i = 1; i < W; ++i) s = std::max(s, v[i]);
  return s;
}

// exp on a vector: 2^n * p(r) with n = round(x / ln 2) and r = x - n ln 2 split in two parts,
// p Cephes' degree-6 minimax polynomial (about 1 ulp on |r| <= ln 2 / 2). Inputs below
// ln(FLT_MIN), -inf included, give exactly 0 (std::exp would give a subnormal at most 1.2e-38),
// so masked keys weigh nothing. Inputs are never above 0 here (x = score - running max).
template <int W>
ATTNPROF_INLINE typename Lanes<W>::V vexp(typename Lanes<W>::V x) {
  using V = typename Lanes<W>::V;
  using I = typename Lanes<W>::I;
  const V lo = splat<V>(-87.3365447504f), hi = splat<V>(88.3762626647949f);
  const V xc = x < lo ? lo : (x > hi ? hi : x);
  // Adding 1.5 * 2^23 rounds to an integer in the mantissa (round to nearest even).
  const V magic = splat<V>(12582912.0f);
  const V n = (xc * 1.44269504088896341f + magic) - magic;
  V r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  V y = splat<V>(1.9875691500e-4f);
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * (r * r) + r + 1.0f;
  const I bits = (__builtin_convertvector(n, I) + 127) << 23;
  const V result = y * (V)bits;  // a vector cast reinterprets the bits
  return x < lo ? V{} : result;
}

// S[i][c] = sum_d Q[i][d] Kt[d][c] for NR rows and all BK columns. Each (row, column) sums over
// d in order whatever NR is, so a row's scores do not depend on its neighbours.
template <int W, int NR>
ATTNPROF_INLINE void scores(const float* __restrict q, const float* __restrict kt,
                            float* __restrict s, int D) {
  using V = typename Lanes<W>::V;
  constexpr int NC = Lanes<W>::NC;
  for (int c0 = 0; c0 < BK; c0 += NC * W) {
    V acc[NR][NC] = {};
    for (int d = 0; d < D; ++d) {
      V k[NC];
      for (int j = 0; j < NC; ++j) k[j] = load<V>(kt + d * BK + c0 + j * W);
      for (int i = 0; i < NR; ++i) {
        const float qv = q[i * D + d];
        for (int j = 0; j < NC; ++j) acc[i][j] += k[j] * qv;
      }
    }
    for (int i = 0; i < NR; ++i)
      for (int j = 0; j < NC; ++j) store(s + i * BK + c0 + j * W, acc[i][j]);
  }
}

// The same scores straight from K's rows (k_stride apart), for the first `cols` columns: one
// dot product per (row, key), summed across the vector at the end. For items of few rows
// (decode: one position, the group's heads), where packing Kt would cost more than it saves.
template <int W, int NR>
ATTNPROF_INLINE void scores_direct(const float* __restrict q, const float* __restrict k,
                                   std::int64_t k_stride, float* __restrict s, int cols, int D) {
  using V = typename Lanes<W>::V;
  for (int c = 0; c < cols; ++c) {
    const float* kr = k + c * k_stride;
    V acc[NR] = {};
    int d = 0;
    for (; d + W <= D; d += W) {
      const V kv = load<V>(kr + d);
      for (int i = 0; i < NR; ++i) acc[i] += load<V>(q + i * D + d) * kv;
    }
    for (int i = 0; i < NR; ++i) {
      float sum = hsum<W>(acc[i]);
      for (int e = d; e < D; ++e) sum += q[i * D + e] * kr[e];
      s[i * BK + c] = sum;
    }
  }
}

// O[i][:] += sum_c P[i][c] V[c][:] over the tile's `cols` keys, for NR rows, NV vectors of the
// head dimension at a time starting at d0.
template <int W, int NR, int NV>
ATTNPROF_INLINE void update_block(const float* __restrict pr, const float* __restrict v,
                                  std::int64_t v_stride, float* __restrict o, int cols, int D,
                                  int d0) {
  using V = typename Lanes<W>::V;
  V acc[NR][NV] = {};
  for (int c = 0; c < cols; ++c) {
    V x[NV];
    for (int j = 0; j < NV; ++j) x[j] = load<V>(v + c * v_stride + d0 + j * W);
    for (int i = 0; i < NR; ++i) {
      const float w = pr[i * BK + c];
      for (int j = 0; j < NV; ++j) acc[i][j] += x[j] * w;
    }
  }
  for (int i = 0; i < NR; ++i)
    for (int j = 0; j < NV; ++j) {
      float* out = o + i * D + d0 + j * W;
      store(out, load<V>(out) + acc[i][j]);
    }
}

template <int W, int NR>
ATTNPROF_INLINE void update(const float* __restrict pr, const float* __restrict v,
                            std::int64_t v_stride, float* __restrict o, int cols, int D) {
  constexpr int NC = Lanes<W>::NC;
  int d0 = 0;
  for (; d0 + NC * W <= D; d0 += NC * W) update_block<W, NR, NC>(pr, v, v_stride, o, cols, D, d0);
  for (; d0 + W <= D; d0 += W) update_block<W, NR, 1>(pr, v, v_stride, o, cols, D, d0);
  for (; d0 < D; ++d0)  // a head dimension that is no multiple of the vector width
    for (int i = 0; i < NR; ++i) {
      float acc = 0;
      for (int c = 0; c < cols; ++c) acc += pr[i * BK + c] * v[c * v_stride + d0];
      o[i * D + d0] += acc;
    }
}

// The register blocks' row count is a template argument; an item's last block may have fewer
// rows. (No lambdas here: GCC does not give a lambda its enclosing function's target ISA.)
template <int W>
ATTNPROF_INLINE void scores_rows(int n, const float* q, const float* kt, float* s, int D) {
  switch (n) {
    case 4:
      return scores<W, 4>(q, kt, s, D);
    case 3:
      return scores<W, 3>(q, kt, s, D);
    case 2:
      return scores<W, 2>(q, kt, s, D);
    default:
      return scores<W, 1>(q, kt, s, D);
  }
}

template <int W>
ATTNPROF_INLINE void scores_direct_rows(int n, const float* q, const float* k,
                                        std::int64_t k_stride, float* s, int cols, int D) {
  switch (n) {
    case 4:
      return scores_direct<W, 4>(q, k, k_stride, s, cols, D);
    case 3:
      return scores_direct<W, 3>(q, k, k_stride, s, cols, D);
    case 2:
      return scores_direct<W, 2>(q, k, k_stride, s, cols, D);
    default:
      return scores_direct<W, 1>(q, k, k_stride, s, cols, D);
  }
}

template <int W>
ATTNPROF_INLINE void update_rows(int n, const float* pr, const float* v, std::int64_t v_stride,
                                 float* o, int cols, int D) {
  switch (n) {
    case 4:
      return update<W, 4>(pr, v, v_stride, o, cols, D);
    case 3:
      return update<W, 3>(pr, v, v_stride, o, cols, D);
    case 2:
      return update<W, 2>(pr, v, v_stride, o, cols, D);
    default:
      return update<W, 1>(pr, v, v_stride, o, cols, D);
  }
}

inline bool any_active(const std::vector<char>& active, int r0, int n) {
  return std::any_of(active.begin() + r0, active.begin() + r0 + n, [](char a) { return a; });
}

template <int W>
ATTNPROF_INLINE void run_item(const AttentionParams& p, const Item& it, Scratch& t) {
  using V = typename Lanes<W>::V;
  constexpr int NR = Lanes<W>::NR;
  const int D = p.head_dim;
  const int group = p.heads_q / p.heads_kv;
  const SequenceView sv = sequence_view(p, it.b);
  float* const q = t.q.get();
  float* const o = t.o.get();
  float* const s = t.s.get();
  float* const kt = t.kt.get();
  float* const m = t.m.get();
  float* const l = t.l.get();

  int klo = std::numeric_limits<int>::max(), khi = 0;
  for (int r = 0; r < it.rows; ++r) {
    const int pos = it.pos0 + r / group, h = it.hk * group + r % group;
    const KeyRange kr = key_range(p, sv, pos);
    t.lo[r] = kr.lo, t.hi[r] = kr.hi;
    if (kr.lo < kr.hi) klo = std::min(klo, kr.lo), khi = std::max(khi, kr.hi);
    m[r] = neg_inf, l[r] = 0;
    load_row(p.q, p.dtype, sv.q_offset + h * p.q_stride_h + pos * p.q_stride_s, D, q + r * D,
             p.scale);
  }
  std::fill(o, o + static_cast<std::size_t>(it.rows) * D, 0.0f);

  const std::int64_t k_base = sv.k_offset + it.hk * p.k_stride_h;
  const std::int64_t v_base = sv.v_offset + it.hk * p.v_stride_h;
  // Fixed by the item's size, which the shape alone fixes (see positions_per_item).
  const bool direct = it.rows <= flash_direct_rows;
  for (int k0 = khi > klo ? klo / BK * BK : khi; k0 < khi; k0 += BK) {
    const int cols = std::min(BK, khi - k0);

    const float* k = nullptr;  // direct: the tile's key rows, k_stride apart
    std::int64_t k_stride = 0;
    if (direct && p.dtype == ScalarType::f32) {
      k = static_cast<const float*>(p.k) + k_base + k0 * p.k_stride_s;
      k_stride = p.k_stride_s;
    } else if (direct) {
      for (int c = 0; c < cols; ++c)
        load_row(p.k, p.dtype, k_base + (k0 + c) * p.k_stride_s, D, kt + c * D);
      k = kt;
      k_stride = D;
    } else {
      // Pack K transposed; columns past the tile's keys stay 0, so their scores are finite.
      for (int c = 0; c < cols; ++c) {
        const std::int64_t at = k_base + (k0 + c) * p.k_stride_s;
        const float* row = t.krow.get();
        if (p.dtype == ScalarType::f32)
          row = static_cast<const float*>(p.k) + at;
        else
          load_row(p.k, p.dtype, at, D, t.krow.get());
        for (int d = 0; d < D; ++d) kt[d * BK + c] = row[d];
      }
      if (cols < BK)
        for (int d = 0; d < D; ++d) std::fill(kt + d * BK + cols, kt + (d + 1) * BK, 0.0f);
    }
    const float* v;
    std::int64_t v_stride;
    if (p.dtype == ScalarType::f32) {
      v = static_cast<const float*>(p.v) + v_base + k0 * p.v_stride_s;
      v_stride = p.v_stride_s;
    } else {
      for (int c = 0; c < cols; ++c)
        load_row(p.v, p.dtype, v_base + (k0 + c) * p.v_stride_s, D, t.v.get() + c * D);
      v = t.v.get();
      v_stride = D;
    }

    // Rows that see a key of this tile; the others stay exactly as they are.
    for (int r = 0; r < it.rows; ++r) t.active[r] = t.lo[r] < k0 + cols && t.hi[r] > k0;

    for (int r0 = 0; r0 < it.rows; r0 += NR) {
      const int n = std::min(NR, it.rows - r0);
      if (!any_active(t.active, r0, n)) continue;
      if (direct)
        scores_direct_rows<W>(n, q + r0 * D, k, k_stride, s + r0 * BK, cols, D);
      else
        scores_rows<W>(n, q + r0 * D, kt, s + r0 * BK, D);
    }

    for (int r = 0; r < it.rows; ++r) {
      float* sr = s + r * BK;
      if (!t.active[r]) {
        std::fill(sr, sr + BK, 0.0f);  // its register block may still run: add nothing
        continue;
      }
      const int pos = it.pos0 + r / group;
      const int clo = std::clamp(t.lo[r] - k0, 0, cols), chi = std::clamp(t.hi[r] - k0, 0, cols);
      for (int c = 0; c < clo; ++c) sr[c] = neg_inf;
      for (int c = chi; c < BK; ++c) sr[c] = neg_inf;
      if (p.mask) {
        const float* mrow =
            &p.mask[(static_cast<std::int64_t>(p.mask_batch == 1 ? 0 : it.b) * p.seq_q + pos) *
                        static_cast<std::int64_t>(p.seq_k) +
                    k0];
        for (int c = clo; c < chi; ++c) sr[c] += mrow[c];
      }
      V vmax = splat<V>(m[r]);
      for (int c = 0; c < BK; c += W) {
        const V x = load<V>(sr + c);
        vmax = x > vmax ? x : vmax;
      }
      const float mx = hmax<W>(vmax);
      if (mx == neg_inf) {  // nothing visible yet in this row
        std::fill(sr, sr + BK, 0.0f);
        continue;
      }
      const float alpha = std::exp(m[r] - mx);  // exp(-inf) = 0 on the row's first keys
      V vsum{};
      for (int c = 0; c < BK; c += W) {
        const V e = vexp<W>(load<V>(sr + c) - mx);
        store(sr + c, e);
        vsum += e;
      }
      l[r] = l[r] * alpha + hsum<W>(vsum);
      m[r] = mx;
      if (alpha != 1.0f) {
        float* orow = o + r * D;
        for (int d = 0; d < D; ++d) orow[d] *= alpha;
      }
    }

    for (int r0 = 0; r0 < it.rows; r0 += NR) {
      const int n = std::min(NR, it.rows - r0);
      if (any_active(t.active, r0, n))
        update_rows<W>(n, s + r0 * BK, v, v_stride, o + r0 * D, cols, D);
    }
  }

  for (int r = 0; r < it.rows; ++r) {
    const int pos = it.pos0 + r / group, h = it.hk * group + r % group;
    float* orow = o + r * D;
    const float inv = l[r] > 0 ? 1.0f / l[r] : 0.0f;  // a row that saw no key: zeros
    for (int d = 0; d < D; ++d) orow[d] *= inv;
    store_row(p.o, p.dtype, sv.o_offset + h * p.o_stride_h + pos * p.o_stride_s, D, orow);
  }
}

using ItemFn = void (*)(const AttentionParams&, const Item&, Scratch&);

void run_item_portable(const AttentionParams& p, const Item& it, Scratch& t) {
  run_item<4>(p, it, t);
}

#ifdef ATTNPROF_X86_SIMD
__attribute__((target("avx2,fma"))) void run_item_avx2(const AttentionParams& p, const Item& it,
                                                       Scratch& t) {
  run_item<8>(p, it, t);
}

__attribute__((target("avx512f,avx2,fma"))) void run_item_avx512(const AttentionParams& p,
                                                                 const Item& it, Scratch& t) {
  run_item<16>(p, it, t);
}
#endif

ItemFn item_fn(Simd simd) {
  switch (simd) {
#ifdef ATTNPROF_X86_SIMD
    case Simd::avx512:
      return run_item_avx512;
    case Simd::avx2:
      return run_item_avx2;
#endif
    default:
      return run_item_portable;
  }
}

}  // namespace

const char* to_string(Simd s) {
  switch (s) {
    case Simd::portable:
      return "portable";
    case Simd::avx2:
      return "avx2";
    case Simd::avx512:
      return "avx512";
  }
  return "?";
}

Simd best_simd() {
#ifdef ATTNPROF_X86_SIMD
  // libgcc's checks include the OS's XSAVE support for the wider registers.
  if (__builtin_cpu_supports("avx512f")) return Simd::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Simd::avx2;
#endif
  return Simd::portable;
}

Status flash_forward(const AttentionParams& p, int threads) {
  return flash_forward(p, threads, best_simd());
}

Status flash_forward(const AttentionParams& p, int threads, Simd simd, Simd widest) {
  if (const char* why = check_params(p)) return Status::unsupported(why);
  if (static_cast<int>(simd) > static_cast<int>(widest))
    return Status::unsupported(std::string("this CPU has no ") + to_string(simd));
  const ItemFn fn = item_fn(simd);
  const int per_item = positions_per_item(p);
  const int group = p.heads_q / p.heads_kv;
  const long chunks = (p.seq_q + per_item - 1) / per_item;
  const long heads = static_cast<long>(p.batch) * p.heads_kv;
  const long items = chunks * heads;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<long>(threads, std::max(1L, items)));

  // Items handed out by an atomic counter, the last query positions first: under a causal mask
  // they see the most keys, and starting with them leaves the short ones to fill the gaps.
  std::atomic<long> next{0};
  auto worker = [&] {
    Scratch t(per_item * group, p.head_dim);
    for (long i = next++; i < items; i = next++) {
      const long chunk = chunks - 1 - i / heads;
      const long bh = i % heads;
      Item it{static_cast<int>(bh / p.heads_kv), static_cast<int>(bh % p.heads_kv),
              static_cast<int>(chunk * per_item), 0};
      const int len_q = sequence_view(p, it.b).len_q;  // varlen: this sequence's own length
      it.rows = std::min(per_item, len_q - it.pos0) * group;
      if (it.rows > 0) fn(p, it, t);
    }
  };
  if (threads == 1) {
    worker();
    return Status::success();
  }
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (int i = 1; i < threads; ++i)
    pool.emplace_back([&worker] {
      worker();
      g_exited_wait_ns.fetch_add(own_run_delay_ns(), std::memory_order_relaxed);
    });
  worker();
  for (auto& th : pool) th.join();
  return Status::success();
}

}  // namespace attnprof::kernels::cpu
