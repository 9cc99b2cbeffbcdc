// scenario::models: the embedded presets' geometry, and that a scenario cannot redefine one.
#include <doctest/doctest.h>

#include "harness/scenario/scenario.h"
#include "harness/util/error.h"

using namespace attnprof;

TEST_SUITE("scenario::models") {
  TEST_CASE("the embedded presets load and carry the published geometry") {
    const auto& presets = scenario::model_presets();
    CHECK(presets.size() >= 10);
    for (const char* name : {"bert-base", "bert-large", "gpt2", "llama-2-7b", "llama-2-13b",
                             "llama-2-70b", "llama-3-8b", "llama-3-70b", "mistral-7b"}) {
      CAPTURE(name);
      const core::Geometry* g = scenario::find_model(name);
      REQUIRE(g);
      CHECK(g->heads % g->kv_heads == 0);
      CHECK(g->max_positions > 0);
    }
    auto* l70 = scenario::find_model("llama-2-70b");
    CHECK(l70->heads == 64);
    CHECK(l70->kv_heads == 8);
    auto* l3 = scenario::find_model("llama-3-8b");
    CHECK(l3->heads == 32);
    CHECK(l3->kv_heads == 8);
    CHECK(l3->norm == "rmsnorm");
    auto* m = scenario::find_model("mistral-7b");
    CHECK(m->sliding_window == 4096);
    CHECK(m->kv_heads == 8);
    auto* b = scenario::find_model("bert-base");
    CHECK(b->kv_heads == 12);  // defaulted to heads
    CHECK(b->hidden == 768);
    CHECK(b->max_positions == 512);
    CHECK_FALSE(scenario::find_model("gpt5"));
  }

  TEST_CASE("presets cannot be redefined inline") {
    try {
      scenario::load_text(
          "models:\n  gpt2: {heads: 2, head_dim: 8}\nworkloads: [{model: gpt2, seq_len: 8}]\n",
          "t.yaml");
      FAIL("expected an error");
    } catch (const util::InputError& e) {
      CHECK(std::string(e.what()) ==
            "t.yaml:2:3: model \"gpt2\" is already defined; give yours another name");
    }
  }
}
