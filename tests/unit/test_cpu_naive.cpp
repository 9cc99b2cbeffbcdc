// The CPU reference kernel against answers worked by hand, mask by mask.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/problem.h"

using namespace attnprof::kernels;
using namespace attnprof::kernels::cpu;

namespace {

// One batch, Sq = 2 queries against Sk = 3 keys, D = 2, scale 1, fp32; heads given by the caller.
struct Tiny {
  std::vector<float> q, k, v, o;
  std::vector<float> mask;
  std::vector<int> lens;
  AttentionParams p;
  Tiny(int heads_q = 1, int heads_kv = 1) {
    const float q1[] = {1, 0, 0, 1}, k1[] = {1, 0, 0, 1, 1, 1}, v1[] = {1, 0, 0, 1, 2, 3};
    for (int h = 0; h < heads_q; ++h) q.insert(q.end(), q1, q1 + 4);
    for (int h = 0; h < heads_kv; ++h) k.insert(k.end(), k1, k1 + 6), v.insert(v.end(), v1, v1 + 6);
    o.assign(q.size(), -7.0f);
    p.q = q.data(), p.k = k.data(), p.v = v.data(), p.o = o.data();
    p.batch = 1, p.heads_q = heads_q, p.heads_kv = heads_kv, p.seq_q = 2, p.seq_k = 3;
    p.head_dim = 2, p.scale = 1.0f;
    p.set_contiguous_bhsd();
  }
  void run() { REQUIRE(naive_forward(p).ok()); }
};

const double e = std::exp(1.0);

}  // namespace

TEST_SUITE("kernels::cpu::naive") {
  TEST_CASE("no mask: softmax(QK^T) V by hand") {
    Tiny t;
    t.run();
    // Row 0 scores [1, 0, 1]; row 1 scores [0, 1, 1].
    CHECK(t.o[0] == doctest::Approx(3 * e / (2 * e + 1)).epsilon(1e-6));
    CHECK(t.o[1] == doctest::Approx((1 + 3 * e) / (2 * e + 1)).epsilon(1e-6));
    CHECK(t.o[2] == doctest::Approx((1 + 2 * e) / (1 + 2 * e)).epsilon(1e-6));
    CHECK(t.o[3] == doctest::Approx(4 * e / (1 + 2 * e)).epsilon(1e-6));
  }

  TEST_CASE("causal is bottom-right aligned when Sq < Sk") {
    Tiny t;
    t.p.causal = true;
    t.run();
    // Query 0 sits at position 1 (keys 0, 1), query 1 at position 2 (all keys).
    CHECK(t.o[0] == doctest::Approx(e / (e + 1)).epsilon(1e-6));
    CHECK(t.o[1] == doctest::Approx(1 / (e + 1)).epsilon(1e-6));
    CHECK(t.o[2] == doctest::Approx(1.0).epsilon(1e-6));
    CHECK(t.o[3] == doctest::Approx(4 * e / (1 + 2 * e)).epsilon(1e-6));
  }

  TEST_CASE("window 1 keeps only the key at the query's own position") {
    Tiny t;
    t.p.window = 1;
    t.run();
    CHECK(t.o == std::vector<float>{0, 1, 2, 3});
  }

  TEST_CASE("padding masks keys past seq_lens; an empty sequence gives zeros") {
    Tiny t;
    t.lens = {1};
    t.p.seq_lens = t.lens.data();
    t.run();
    CHECK(t.o == std::vector<float>{1, 0, 1, 0});
    t.lens = {0};
    t.run();
    CHECK(t.o == std::vector<float>{0, 0, 0, 0});
  }

  TEST_CASE("custom additive mask: a bias shifts weights, a fully masked row gives zeros") {
    Tiny t;
    const float inf = std::numeric_limits<float>::infinity();
    // Row 0: every key masked. Row 1: key 0 masked, key 1 biased by -1 (scores [-, 0, 1]).
    t.mask = {-inf, -inf, -inf, -inf, -1.0f, 0.0f};
    t.p.mask = t.mask.data();
    t.run();
    CHECK(t.o[0] == 0.0f);
    CHECK(t.o[1] == 0.0f);
    CHECK(t.o[2] == doctest::Approx(2 * e / (1 + e)).epsilon(1e-6));
    CHECK(t.o[3] == doctest::Approx((1 + 3 * e) / (1 + e)).epsilon(1e-6));
  }

  TEST_CASE("GQA: query heads share their group's kv head") {
    Tiny t(4, 2);
    // kv head 1 gets different values; query heads 2 and 3 must use them.
    for (int i = 6; i < 12; ++i) t.v[i] = -t.v[i];
    t.run();
    for (int h = 0; h < 4; ++h) {
      const float sign = h < 2 ? 1.0f : -1.0f;
      CHECK(t.o[h * 4 + 0] == doctest::Approx(sign * 3 * e / (2 * e + 1)).epsilon(1e-6));
    }
  }

  TEST_CASE("unsupported params return a reason, not a crash") {
    Tiny t(3, 2);
    const Status s = naive_forward(t.p);
    CHECK(s.code == Status::Code::unsupported);
    CHECK(s.message == "heads_q must be a multiple of heads_kv (GQA)");
    t.p.o = nullptr;
    CHECK(naive_forward(t.p).message == "q, k, v and o must all be set");
  }

  TEST_CASE("varlen: each packed sequence equals the same sequence run alone") {
    for (bool causal : {false, true}) {
      ProblemShape shape{.batch = 3,
                         .heads_q = 4,
                         .heads_kv = 2,
                         .seq_q = 19,
                         .seq_k = 19,
                         .head_dim = 16,
                         .causal = causal,
                         .varlen = true};
      Problem packed = make_problem(shape);
      REQUIRE(naive_forward(packed.params()).ok());
      const std::vector<float> out = packed.output();
      const int row = shape.heads_q * shape.head_dim;  // floats per packed query row
      const int kvrow = shape.heads_kv * shape.head_dim;
      for (int b = 0; b < shape.batch; ++b) {
        CAPTURE(b);
        const int q0 = packed.cu_seqlens_q[b], lq = packed.cu_seqlens_q[b + 1] - q0;
        const int k0 = packed.cu_seqlens_k[b], lk = packed.cu_seqlens_k[b + 1] - k0;
        // The same rows, unpacked to the [1, S, H, D] layout through strides.
        AttentionParams p = packed.params();
        std::vector<float> o(static_cast<size_t>(lq) * row);
        p.q = reinterpret_cast<const float*>(packed.q.data()) + std::int64_t{q0} * row;
        p.k = reinterpret_cast<const float*>(packed.k.data()) + std::int64_t{k0} * kvrow;
        p.v = reinterpret_cast<const float*>(packed.v.data()) + std::int64_t{k0} * kvrow;
        p.o = o.data();
        p.batch = 1, p.seq_q = lq, p.seq_k = lk;
        p.cu_seqlens_q = p.cu_seqlens_k = nullptr;
        p.q_stride_b = p.k_stride_b = p.v_stride_b = p.o_stride_b = 0;
        REQUIRE(naive_forward(p).ok());
        const std::vector<float> expect(out.begin() + std::int64_t{q0} * row,
                                        out.begin() + std::int64_t{q0 + lq} * row);
        CHECK(max_abs_diff(o, expect) == 0.0);
      }
    }
  }
}
