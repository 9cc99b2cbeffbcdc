// harness/kernel/package: where an "aoti:PATH.pt2" kernel's file is and how a case calls it,
// without LibTorch; and how the scenario loader takes such a kernel.
#include <doctest/doctest.h>

#include "harness/kernel/package.h"
#include "harness/scenario/scenario.h"
#include "harness/util/error.h"

using namespace attnprof;

namespace {

core::Case decode_case(core::MaskKind mask, int q_len, int kv_len) {
  core::Case c;
  c.kernel = "aoti:p.pt2";
  c.mask = mask;
  c.q_len = q_len;
  c.kv_len = kv_len;
  c.model.head_dim = 64;
  return c;
}

}  // namespace

TEST_SUITE("kernel::package") {
  TEST_CASE("a relative package path is beside the scenario file; an absolute one as given") {
    CHECK(kernel::is_package("aoti:x.pt2"));
    CHECK_FALSE(kernel::is_package("op:ns::x"));
    CHECK(kernel::package_path("aoti:pk/b.pt2", "/suites/s.yaml") == "/suites/pk/b.pt2");
    CHECK(kernel::package_path("aoti:../b.pt2", "/suites/x/s.yaml") == "/suites/b.pt2");
    CHECK(kernel::package_path("aoti:/abs/b.pt2", "/suites/s.yaml") == "/abs/b.pt2");
    core::Case c = decode_case(core::MaskKind::none, 1, 8);
    c.loc.file = "/suites/s.yaml";
    CHECK(kernel::package_path(c) == "/suites/p.pt2");
  }

  TEST_CASE("which cases pass a mask tensor, and when causal is the is_causal flag") {
    using M = core::MaskKind;
    CHECK_FALSE(kernel::takes_mask_tensor(decode_case(M::none, 8, 8)));
    CHECK_FALSE(kernel::takes_mask_tensor(decode_case(M::causal, 8, 8)));  // is_causal
    CHECK(kernel::causal_flag(decode_case(M::causal, 8, 8)));
    CHECK_FALSE(kernel::takes_mask_tensor(decode_case(M::causal, 1, 8)));  // sees every key
    CHECK_FALSE(kernel::causal_flag(decode_case(M::causal, 1, 8)));
    CHECK(kernel::takes_mask_tensor(decode_case(M::causal, 4, 8)));  // bottom-right: a mask
    CHECK_FALSE(kernel::causal_flag(decode_case(M::causal, 4, 8)));
    CHECK(kernel::takes_mask_tensor(decode_case(M::sliding_window, 8, 8)));
    core::Case padded = decode_case(M::padding, 8, 8);
    padded.seq_lens = {5};
    CHECK(kernel::takes_mask_tensor(padded));
    CHECK(kernel::softmax_scale(padded) == doctest::Approx(0.125));
    padded.scale = 0.5;
    CHECK(kernel::softmax_scale(padded) == 0.5);
  }

  TEST_CASE("the loader takes aoti:PATH.pt2 whether or not the file is there yet") {
    scenario::LoadOptions lo{{"sdpa.math"}};
    auto s = scenario::load_text(
        "model: bert-base\nworkloads: [{seq_len: 64, kernels: [sdpa.math, 'aoti:k.pt2']}]\n",
        "/suites/t.yaml", lo);
    REQUIRE(s.cases.size() == 2);
    CHECK(s.cases[1].key == "bert-base/prefill/b1-s64-fp32-none/aoti:k.pt2");
    CHECK(kernel::package_path(s.cases[1]) == "/suites/k.pt2");
    try {
      scenario::load_text("model: bert-base\nworkloads: [{seq_len: 64, kernels: ['aoti:k']}]\n",
                          "t.yaml", lo);
      FAIL("aoti:k loaded");
    } catch (const util::InputError& e) {
      CHECK(std::string(e.what()) ==
            "t.yaml:2:37: kernel \"aoti:k\": a compiled package is aoti:PATH.pt2");
    }
  }
}
