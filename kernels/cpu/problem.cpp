// Deterministic attention problems for tests and benchmarks (see problem.h).
#include "kernels/cpu/problem.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "kernels/cpu/convert.h"

namespace attnprof::kernels::cpu {
namespace {

// splitmix64: the same numbers on every platform and standard library.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) / 16777216.0f * 2.0f - 1.0f; }
};

void fill(std::vector<unsigned char>& buf, ScalarType t, std::int64_t n, Rng& rng) {
  buf.assign(static_cast<size_t>(n) * element_size(t), 0);
  for (std::int64_t i = 0; i < n; ++i) store_element(buf.data(), t, i, rng.uniform());
}

}  // namespace

std::string ProblemShape::name() const {
  // snprintf rather than a chain of std::string operator+: GCC 12 at -O3 warns falsely
  // (-Wrestrict, GCC bug 105329) on the latter.
  char buf[160];
  std::snprintf(buf, sizeof buf, "b%d h%d/%d s%dx%d d%d %s%s", batch, heads_q, heads_kv, seq_q,
                seq_k, head_dim, to_string(dtype), causal ? " causal" : "");
  std::string s = buf;
  if (window) s += " w" + std::to_string(window);
  if (padding) s += " pad";
  if (custom_mask) s += " mask";
  if (varlen) s += " varlen";
  return s;
}

Problem make_problem(const ProblemShape& shape) {
  Problem pr;
  pr.shape = shape;
  Rng rng{shape.seed};
  const auto& s = shape;
  if (s.varlen) {
    // Sequence b is shorter than the longest by a varying amount; the first is the longest.
    pr.cu_seqlens_q.assign(1, 0);
    pr.cu_seqlens_k.assign(1, 0);
    for (int b = 0; b < s.batch; ++b) {
      const int lk = std::max(1, s.seq_k - (b * 37) % (s.seq_k / 2 + 1));
      const int lq = s.seq_q == s.seq_k ? lk : std::max(1, s.seq_q - (b * 13) % (s.seq_q / 2 + 1));
      pr.cu_seqlens_q.push_back(pr.cu_seqlens_q.back() + lq);
      pr.cu_seqlens_k.push_back(pr.cu_seqlens_k.back() + lk);
    }
    pr.total_q = pr.cu_seqlens_q.back();
    pr.total_k = pr.cu_seqlens_k.back();
    fill(pr.q, s.dtype, std::int64_t{pr.total_q} * s.heads_q * s.head_dim, rng);
    fill(pr.k, s.dtype, std::int64_t{pr.total_k} * s.heads_kv * s.head_dim, rng);
    fill(pr.v, s.dtype, std::int64_t{pr.total_k} * s.heads_kv * s.head_dim, rng);
    pr.o.assign(static_cast<size_t>(pr.total_q) * s.heads_q * s.head_dim * element_size(s.dtype),
                0);
  } else {
    fill(pr.q, s.dtype, std::int64_t{s.batch} * s.heads_q * s.seq_q * s.head_dim, rng);
    fill(pr.k, s.dtype, std::int64_t{s.batch} * s.heads_kv * s.seq_k * s.head_dim, rng);
    fill(pr.v, s.dtype, std::int64_t{s.batch} * s.heads_kv * s.seq_k * s.head_dim, rng);
    pr.o.assign(pr.q.size(), 0);
  }
  if (s.padding) {
    // The first sequence keeps every key; later ones lose up to half, the last of several
    // keeps only one (a decode against a nearly empty cache).
    for (int b = 0; b < s.batch; ++b) {
      int len = b == 0 ? s.seq_k : std::max(1, s.seq_k - (b * 7919) % (s.seq_k / 2 + 1));
      if (b > 0 && b == s.batch - 1 && s.batch > 2) len = 1;
      pr.seq_lens.push_back(len);
    }
  }
  if (s.custom_mask) {
    const float inf = std::numeric_limits<float>::infinity();
    pr.mask.resize(static_cast<size_t>(s.batch) * s.seq_q * s.seq_k);
    for (auto& m : pr.mask) {
      const float u = rng.uniform();
      m = u < -0.6f ? -inf : u;  // about a fifth of the keys masked, the rest biased
    }
    if (s.seq_q > 1)  // one row sees nothing: its output must be zeros, not NaN
      std::fill(pr.mask.begin() + s.seq_k, pr.mask.begin() + 2 * s.seq_k, -inf);
  }
  return pr;
}

AttentionParams Problem::params() {
  const auto& s = shape;
  AttentionParams p;
  p.q = q.data(), p.k = k.data(), p.v = v.data(), p.o = o.data();
  p.dtype = s.dtype;
  p.batch = s.batch, p.heads_q = s.heads_q, p.heads_kv = s.heads_kv;
  p.seq_q = s.seq_q, p.seq_k = s.seq_k, p.head_dim = s.head_dim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  p.causal = s.causal;
  p.window = s.window;
  if (s.varlen) {
    // Packed [total, H, D]: a row's heads sit next to each other.
    const std::int64_t d = s.head_dim;
    p.q_stride_s = s.heads_q * d, p.q_stride_h = d;
    p.k_stride_s = p.v_stride_s = s.heads_kv * d, p.k_stride_h = p.v_stride_h = d;
    p.o_stride_s = p.q_stride_s, p.o_stride_h = d;
    p.cu_seqlens_q = cu_seqlens_q.data(), p.cu_seqlens_k = cu_seqlens_k.data();
    // The longest sequences bound the grid.
    for (int b = 0; b < s.batch; ++b) {
      p.seq_q = std::max(p.seq_q, cu_seqlens_q[b + 1] - cu_seqlens_q[b]);
      p.seq_k = std::max(p.seq_k, cu_seqlens_k[b + 1] - cu_seqlens_k[b]);
    }
  } else {
    p.set_contiguous_bhsd();
  }
  if (!seq_lens.empty()) p.seq_lens = seq_lens.data();
  if (!mask.empty()) p.mask = mask.data(), p.mask_batch = s.batch;
  return p;
}

std::vector<float> Problem::output() const {
  const std::int64_t n = static_cast<std::int64_t>(o.size()) / element_size(shape.dtype);
  std::vector<float> out(static_cast<size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    out[static_cast<size_t>(i)] = load_element(o.data(), shape.dtype, i);
  return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(d <= worst)) worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
  }
  return worst;
}

double tolerance(ScalarType t) {
  switch (t) {
    case ScalarType::f32:
      return 2e-5;
    case ScalarType::f16:
      return 2e-3;
    case ScalarType::bf16:
      return 1.6e-2;
  }
  return 0;
}

}  // namespace attnprof::kernels::cpu
