#include <doctest/doctest.h>

#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/problem.h"

using namespace attnprof::kernels;
using namespace attnprof::kernels::cpu;

namespace {

// flash_forward against naive_forward on the same inputs; returns the largest difference.
double flash_vs_naive(const ProblemShape& shape, int threads) {
  Problem ref = make_problem(shape);
  REQUIRE(naive_forward(ref.params()).ok());
  Problem got = make_problem(shape);
  const Status s = flash_forward(got.params(), threads);
  REQUIRE_MESSAGE(s.ok(), s.message);
  return max_abs_diff(got.output(), ref.output());
}

struct Geometry {
  int batch, heads_q, heads_kv, seq_q, seq_k, head_dim;
};

// Shapes that cross tile edges (block_q 32, block_k 64), GQA 1/4/8, decode (Sq = 1),
// Sq < Sk (chunked prefill) and Sq > Sk (rows before the first key see nothing under causal).
const Geometry geometries[] = {
    {1, 1, 1, 1, 1, 64},    {2, 4, 4, 37, 37, 64},  {1, 8, 2, 100, 100, 32},
    {2, 8, 1, 1, 257, 128}, {1, 4, 4, 33, 129, 64}, {1, 2, 2, 70, 20, 16},
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
    Problem one = make_problem(s), many = make_problem(s);
    REQUIRE(flash_forward(one.params(), 1).ok());
    REQUIRE(flash_forward(many.params(), 5).ok());
    CHECK(max_abs_diff(one.output(), many.output()) == 0.0);
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
