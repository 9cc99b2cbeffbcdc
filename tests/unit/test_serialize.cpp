#include <doctest/doctest.h>

#include "harness/store/serialize.h"
#include "harness/util/error.h"

using namespace attnprof;

TEST_SUITE("store::serialize") {
  TEST_CASE("a case spec round-trips field by field") {
    core::Case c;
    c.key = "llama/decode/b16-kv4096-bf16-causal/sdpa.flash";
    c.aliases = {"old/key"};
    c.suite = "llama";
    c.workload = "decode";
    c.kernel = "sdpa.flash";
    c.model.name = "llama-2-7b";
    c.model.heads = 32;
    c.model.kv_heads = 8;
    c.model.head_dim = 128;
    c.model.norm = "rmsnorm";
    c.phase = core::Phase::decode;
    c.level = core::Level::layer;
    c.batch = 16;
    c.q_len = 1;
    c.kv_len = 4096;
    c.seq_lens = {4096, 1000};
    c.dtype = core::DType::bf16;
    c.mask = core::MaskKind::sliding_window;
    c.window = 256;
    c.scale = 0.1;
    c.seed = 1ull << 60;
    c.hardware.device = "cuda:1";
    c.hardware.peak_gbps = 4800;
    c.measure.min_samples = 33;
    c.measure.trace = false;
    c.gate.tolerance = 0.03;
    c.loc = {"s.yaml", 12, 5};
    core::Case d = store::case_from_json(store::to_json(c));
    CHECK(store::to_json(d) == store::to_json(c));
    CHECK(d.phase == core::Phase::decode);
    CHECK(d.level == core::Level::layer);
    CHECK(d.seed == 1ull << 60);
    CHECK(d.hardware.peak_gbps == 4800);
    CHECK_FALSE(d.hardware.peak_tflops);
    CHECK(d.loc.line == 12);
  }

  TEST_CASE("an unknown enum value is an input error naming the field") {
    try {
      store::case_from_json({{"dtype", "fp8"}});
      FAIL("no error");
    } catch (const util::InputError& e) {
      CHECK(std::string(e.what()) == "run JSON: unknown dtype \"fp8\"");
    }
  }
}
