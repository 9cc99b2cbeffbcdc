// The CPU flash kernel against the naive reference: shapes, masks, GQA, dtypes, packed
// sequences and thread counts.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/problem.h"

using namespace attnprof::kernels;
using namespace attnprof::kernels::cpu;

namespace {

// Every tile routine this CPU can run: the portable one is checked everywhere, the AVX2 and
// AVX-512 ones where the CPU has them.
std::vector<Simd> simd_levels() {
  std::vector<Simd> levels;
  for (Simd s : {Simd::portable, Simd::avx2, Simd::avx512})
    if (static_cast<int>(s) <= static_cast<int>(best_simd())) levels.push_back(s);
  return levels;
}

// flash_forward against naive_forward on the same inputs, with each tile routine; returns the
// largest difference.
double flash_vs_naive(const ProblemShape& shape, int threads) {
  Problem ref = make_problem(shape);
  REQUIRE(naive_forward(ref.params()).ok());
  double worst = 0;
  for (Simd simd : simd_levels()) {
    CAPTURE(to_string(simd));
    Problem got = make_problem(shape);
    const Status s = flash_forward(got.params(), threads, simd);
    REQUIRE_MESSAGE(s.ok(), s.message);
    worst = std::max(worst, max_abs_diff(got.output(), ref.output()));
  }
  return worst;
}

struct Geometry {
  int batch, heads_q, heads_kv, seq_q, seq_k, head_dim;
};

// Shapes that cross tile edges (items of 256 rows, 64 keys per tile), GQA 1/4/8, decode
// (Sq = 1), Sq < Sk (chunked prefill), Sq > Sk (rows before the first key see nothing under
// causal), and head dimensions that are no multiple of a vector (20: 4 lanes, not 8 or 16;
// 72: 8 lanes, not 16).
const Geometry geometries[] = {
    {1, 1, 1, 1, 1, 64},    {2, 4, 4, 37, 37, 64},  {1, 8, 2, 100, 100, 32},
    {2, 8, 1, 1, 257, 128}, {1, 4, 4, 33, 129, 64}, {1, 2, 2, 70, 20, 16},
    {1, 3, 3, 65, 65, 20},  {1, 4, 1, 19, 150, 72}, {1, 1, 1, 300, 300, 32},
};

struct MaskCase {
  const char* name;
  bool causal;
  int window;
  bool padding, custom;
};
const MaskCase masks[] = {
    {"none", false, 0, false, false},         {"causal", true, 0, false, false},
    {"window", false, 16, false, false},      {"padding", false, 0, true, false},
    {"causal+padding", true, 0, true, false}, {"custom", false, 0, false, true}};

}  // namespace

TEST_SUITE("kernels::cpu::flash") {
  TEST_CASE("matches the naive reference over shapes, masks, GQA, dtypes and threads") {
    for (const Geometry& g : geometries)
      for (const MaskCase& m : masks)
        for (ScalarType t : {ScalarType::f32, ScalarType::f16, ScalarType::bf16})
          for (int threads : {1, 3}) {
            ProblemShape s{g.batch, g.heads_q, g.heads_kv, g.seq_q,   g.seq_k, g.head_dim,
                           t,       m.causal,  m.window,   m.padding, m.custom};
            s.batch = m.padding ? 3 : g.batch;  // padding needs sequences of different lengths
            CAPTURE(s.name());
            CAPTURE(threads);
            CHECK(flash_vs_naive(s, threads) <= tolerance(t));
          }
  }

  TEST_CASE("packed variable-length sequences match the naive reference") {
    for (bool causal : {false, true})
      for (int window : {0, 24})
        for (ScalarType t : {ScalarType::f32, ScalarType::bf16}) {
          ProblemShape s{4, 8, 2, 90, 90, 64, t, causal, window};
          s.varlen = true;
          CAPTURE(s.name());
          CHECK(flash_vs_naive(s, 2) <= tolerance(t));
          s.seq_q = 1;  // decode against caches of different lengths
          CAPTURE(s.name());
          CHECK(flash_vs_naive(s, 2) <= tolerance(t));
        }
  }

  TEST_CASE("the result does not depend on the thread count") {
    ProblemShape s{2, 4, 2, 130, 130, 64, ScalarType::f32, true};
    for (Simd simd : simd_levels()) {
      CAPTURE(to_string(simd));
      Problem one = make_problem(s), many = make_problem(s);
      REQUIRE(flash_forward(one.params(), 1, simd).ok());
      REQUIRE(flash_forward(many.params(), 5, simd).ok());
      CHECK(max_abs_diff(one.output(), many.output()) == 0.0);
    }
  }

  TEST_CASE("a tile routine the CPU lacks is refused, not run") {
    // What the CPU has is the test's input: every routine wider than it is refused, whatever
    // this machine has, and the output is left as it was.
    ProblemShape s{1, 1, 1, 4, 4, 16};
    for (auto [simd, widest] :
         {std::pair{Simd::avx512, Simd::avx2}, std::pair{Simd::avx512, Simd::portable},
          std::pair{Simd::avx2, Simd::portable}}) {
      CAPTURE(to_string(simd));
      CAPTURE(to_string(widest));
      Problem pr = make_problem(s);
      const Problem untouched = make_problem(s);
      const Status st = flash_forward(pr.params(), 1, simd, widest);
      CHECK(st.code == Status::Code::unsupported);
      CHECK(st.message == std::string("this CPU has no ") + to_string(simd));
      CHECK(max_abs_diff(pr.output(), untouched.output()) == 0.0);
    }
    // And what this CPU has runs.
    Problem pr = make_problem(s);
    CHECK(flash_forward(pr.params(), 1, best_simd()).ok());
  }

  TEST_CASE("a wrong answer is caught: the check is not vacuous") {
    ProblemShape s{1, 2, 2, 40, 40, 32, ScalarType::f32, true};
    Problem ref = make_problem(s), got = make_problem(s);
    REQUIRE(naive_forward(ref.params()).ok());
    AttentionParams p = got.params();
    p.causal = false;  // the kernel runs without the mask the reference used
    REQUIRE(flash_forward(p, 1).ok());
    CHECK(max_abs_diff(got.output(), ref.output()) > 1e-2);
  }

  TEST_CASE("unsupported params return a reason") {
    ProblemShape s{1, 4, 3, 8, 8, 16};
    Problem pr = make_problem(s);
    const Status st = flash_forward(pr.params(), 1);
    CHECK(st.code == Status::Code::unsupported);
    CHECK(st.message == "heads_q must be a multiple of heads_kv (GQA)");
  }
}
