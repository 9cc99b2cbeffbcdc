// Users' kernels as plugins: load a TORCH_LIBRARY shared library and run its op as a variant.
#include "harness/util/error.h"
#include "tests/torch/torch_doctest.h"
#include "worker/kernel/plugin.h"
#include "worker/runner/check.h"
#include "worker/runner/workload.h"

using namespace attnprof;

TEST_SUITE("kernel::plugin") {
  TEST_CASE("a plugin op runs through the harness and is checked against the reference") {
    kernel::load_plugin(ATTNPROF_TEST_PLUGIN);
    core::Case c;
    c.model = {"tiny", 8, 2, 32, 256, 4096, 0, 0, "layernorm"};
    c.batch = 2;
    c.q_len = c.kv_len = 24;
    c.mask = core::MaskKind::causal;

    std::string why;
    const kernel::Variant* good = kernel::lookup("op:attnprof_test::attention", &why);
    REQUIRE_MESSAGE(good, why);
    c.kernel = good->name;
    kernel::Inputs in = runner::make_inputs(c);
    at::Tensor ref = runner::reference_output(in);
    auto ok = runner::check_output(good->launch(in), ref, c.dtype);
    CHECK_MESSAGE(ok.ok, ok.message);

    const kernel::Variant* wrong = kernel::lookup("op:attnprof_test::attention_wrong");
    REQUIRE(wrong);
    auto bad = runner::check_output(wrong->launch(in), ref, c.dtype);
    CHECK_FALSE(bad.ok);
    CHECK(bad.message.find("output differs from sdpa.math (fp32)") == 0);
  }

  TEST_CASE("ops that do not exist or do not follow the convention are named") {
    kernel::load_plugin(ATTNPROF_TEST_PLUGIN);
    std::string why;
    CHECK(kernel::lookup("op:attnprof_test::nope", &why) == nullptr);
    CHECK(why == "no op \"attnprof_test::nope\" is registered (load its library with --plugin)");
    CHECK(kernel::lookup("op:attnprof_test::bad_schema", &why) == nullptr);
    CHECK(why.find("op \"attnprof_test::bad_schema\" has schema") == 0);
    CHECK(kernel::lookup("sdpa.nope", &why) == nullptr);
    CHECK(why == "unknown kernel \"sdpa.nope\"");
  }

  TEST_CASE("a library that cannot be loaded is bad input naming the path") {
    try {
      kernel::load_plugin("/nonexistent/libx.so");
      FAIL("expected InputError");
    } catch (const util::InputError& e) {
      CHECK(std::string(e.what()).find("/nonexistent/libx.so: cannot load plugin: ") == 0);
    }
  }
}
