// scenario::case_key: what a key names, and that lengths, not their spelling, identify a case.
#include <doctest/doctest.h>

#include "harness/scenario/scenario.h"

using namespace attnprof;

TEST_SUITE("scenario::key") {
  TEST_CASE("keys name model, phase, shape, dtype, mask and kernel") {
    core::Case c;
    c.model = *scenario::find_model("llama-2-7b");
    c.kernel = "sdpa.flash";
    c.phase = core::Phase::decode;
    c.batch = 16;
    c.q_len = 1;
    c.kv_len = 4096;
    c.dtype = core::DType::bf16;
    CHECK(scenario::case_key(c) == "llama-2-7b/decode/b16-q1-kv4096-bf16-none/sdpa.flash");
    c.phase = core::Phase::prefill;
    c.q_len = c.kv_len = 4096;
    c.batch = 1;
    c.mask = core::MaskKind::causal;
    CHECK(scenario::case_key(c) == "llama-2-7b/prefill/b1-s4096-bf16-causal/sdpa.flash");
    // Settings that do not change what is computed are not identity.
    c.measure.min_samples = 99;
    c.hardware.device = "cuda:3";
    c.suite = "other";
    c.workload = "renamed";
    c.loc = {"elsewhere.yaml", 9, 9};
    CHECK(scenario::case_key(c) == "llama-2-7b/prefill/b1-s4096-bf16-causal/sdpa.flash");
  }

  TEST_CASE("lengths, not how they were written, identify a varlen case") {
    core::Case c;
    c.model.name = "m";
    c.kernel = "k";
    c.q_len = c.kv_len = 8;
    c.batch = 2;
    c.seq_lens = {8, 3};
    auto a = scenario::case_key(c);
    c.seq_lens = {3, 8};
    CHECK(scenario::case_key(c) != a);
    c.seq_lens = {8, 3};
    CHECK(scenario::case_key(c) == a);
  }
}
