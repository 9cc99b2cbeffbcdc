// The LibTorch variants against the reference on the CPU, and the registry's contract.
#include <ATen/Parallel.h>
#include <fmt/ranges.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "harness/kernel/names.h"
#include "harness/scenario/scenario.h"
#include "harness/util/error.h"
#include "harness/util/machine.h"
#include "tests/torch/torch_doctest.h"
#include "worker/env/probe.h"
#include "worker/kernel/registry.h"
#include "worker/kernel/variants/variants.h"
#include "worker/runner/check.h"
#include "worker/runner/runner.h"
#include "worker/runner/thread_placement.h"
#include "worker/runner/workload.h"

using namespace attnprof;

namespace {

core::Case make_case(const std::string& kernel, core::MaskKind mask, int q_len, int kv_len,
                     int heads = 4, int kv_heads = 4) {
  core::Case c;
  c.key = "test/" + kernel;
  c.kernel = kernel;
  c.model = {"tiny", heads, kv_heads, 32, heads * 32, 4096, 0, 0, "layernorm"};
  c.batch = 2;
  c.q_len = q_len;
  c.kv_len = kv_len;
  c.mask = mask;
  c.window = 8;
  c.seed = 7;
  return c;
}

runner::CheckResult run_and_check(const core::Case& c) {
  const kernel::Variant* v = kernel::registry().find(c.kernel);
  REQUIRE(v != nullptr);
  kernel::Inputs in = runner::make_inputs(c);
  at::Tensor out = v->launch(in);
  return runner::check_output(out, runner::reference_output(in), c.dtype);
}

}  // namespace

TEST_SUITE("kernel::registry") {
  TEST_CASE("built-in variants are registered once each") {
    auto names = kernel::registry().names();
    for (const char* n :
         {"sdpa.auto", "sdpa.math", "sdpa.flash", "sdpa.efficient", "sdpa.cudnn", "eager",
          "cpu.naive", "cpu.flash", "cuda.naive", "cuda.flash", "cuda.decode", "cuda.varlen"})
      CHECK_MESSAGE(std::find(names.begin(), names.end(), n) != names.end(), n);
    kernel::Registry r;
    kernel::register_eager(r);
    CHECK_THROWS_AS(kernel::register_eager(r), std::logic_error);
  }

  TEST_CASE("CUDA-only backends skip CPU cases with a reason") {
    const kernel::Variant* v = kernel::registry().find("sdpa.cudnn");
    auto why = v->unsupported(make_case("sdpa.cudnn", core::MaskKind::none, 16, 16));
    REQUIRE(why);
    CHECK(*why == "sdpa.cudnn runs on CUDA devices only");
  }

  TEST_CASE("FLOP and byte models") {
    core::Case c = make_case("eager", core::MaskKind::none, 16, 16);
    CHECK(kernel::attention_flops(c) == doctest::Approx(4.0 * 2 * 4 * 16 * 16 * 32));
    c.mask = core::MaskKind::causal;  // 16*17/2 visible pairs per sequence
    CHECK(kernel::attention_flops(c) == doctest::Approx(4.0 * 4 * 32 * 2 * 136));
    c.mask = core::MaskKind::sliding_window;  // window 8: rows 0..7 see i+1 keys, the rest 8
    CHECK(kernel::attention_pairs(c) == doctest::Approx(2 * (36 + 8 * 8)));
    c.mask = core::MaskKind::none;
    c.seq_lens = {16, 5};  // padding: 16*16 + 16*5
    CHECK(kernel::attention_pairs(c) == doctest::Approx(16 * 16 + 16 * 5));
    c.seq_lens.clear();
    c.q_len = 1;
    c.kv_len = 40;
    c.mask = core::MaskKind::causal;  // decode: one query sees all 40 keys
    CHECK(kernel::attention_pairs(c) == doctest::Approx(2 * 40));
    c.q_len = c.kv_len = 16;
    CHECK(kernel::attention_bytes(c) ==
          doctest::Approx(4.0 * (2 * 2 * 4 * 16 * 32 + 2 * 2 * 4 * 16 * 32)));
    c.seq_lens = {16, 5};  // K and V of the second sequence are 5 rows, not 16
    CHECK(kernel::attention_bytes(c) ==
          doctest::Approx(4.0 * (2 * 2 * 4 * 16 * 32 + 2 * 4 * (16 + 5) * 32)));
    c.seq_lens.clear();
    // cuda.naive also moves its fp32 score matrix [B, H, Sq, Sk] four times: written, read and
    // written by the softmax, read by PV.
    c.kernel = "cuda.naive";
    CHECK(kernel::attention_bytes(c) ==
          doctest::Approx(4.0 * (2 * 2 * 4 * 16 * 32 + 2 * 2 * 4 * 16 * 32) +
                          4 * 4.0 * 4 * 16 * (2 * 16)));
  }
}

TEST_SUITE("kernel::variants") {
  TEST_CASE("every CPU variant matches sdpa.math for every mask, GQA and decode") {
    for (const char* k : {"sdpa.auto", "sdpa.math", "eager", "cpu.naive", "cpu.flash"}) {
      for (auto mask : {core::MaskKind::none, core::MaskKind::causal,
                        core::MaskKind::sliding_window, core::MaskKind::prefix,
                        core::MaskKind::document}) {
        for (auto [q, kv] : {std::pair{24, 24}, std::pair{1, 40}, std::pair{4, 40}}) {
          for (int kv_heads : {4, 1}) {
            core::Case c = make_case(k, mask, q, kv, 4, kv_heads);
            c.prefix = 6;
            c.documents = kv == 24 ? std::vector<int>{10, 14} : std::vector<int>{15, 5, 20};
            CAPTURE(k);
            CAPTURE(core::to_string(mask));
            CAPTURE(q);
            CAPTURE(kv_heads);
            auto r = run_and_check(c);
            CHECK_MESSAGE(r.ok, r.message);
          }
        }
      }
    }
  }

  TEST_CASE("the workload's element mask is the FLOP model's: its kept pairs are the useful ones") {
    using M = core::MaskKind;
    for (M mask : {M::none, M::causal, M::sliding_window, M::prefix, M::document}) {
      for (auto [q, kv] : {std::pair{24, 24}, std::pair{4, 40}}) {
        for (const std::vector<int>& lens : {std::vector<int>{}, std::vector<int>{kv, kv - 7}}) {
          if (mask == M::document && !lens.empty()) continue;  // documents fill the sequence
          core::Case c = make_case("eager", mask, q, kv);
          c.prefix = 6;
          c.documents = kv == 24 ? std::vector<int>{10, 14} : std::vector<int>{15, 5, 20};
          c.seq_lens = lens;
          CAPTURE(core::to_string(mask));
          CAPTURE(q);
          CAPTURE(lens.size());
          at::Tensor seq = lens.empty() ? at::Tensor() : at::tensor(lens, at::kInt);
          at::Tensor keep = runner::make_mask(c, seq, at::kCPU, /*always=*/true);
          CHECK(keep.sum().item<double>() == kernel::attention_pairs(c));
        }
      }
    }
  }

  TEST_CASE("score modifiers: eager and sdpa.math take the additive ones, eager softcap") {
    for (const std::string mod : {"alibi", "rel_bias", "head_bias"}) {
      for (auto mask : {core::MaskKind::causal, core::MaskKind::none}) {
        core::Case c = make_case("eager", mask, 16, 16, 4, 2);
        c.score_mod = mod;
        CAPTURE(mod);
        kernel::Inputs in = runner::make_inputs(c);
        REQUIRE(in.mask.defined());  // the bias, -inf where the mask hides a key
        CHECK((in.mask.scalar_type() == at::kFloat));
        CHECK((in.mask.sizes() == c10::IntArrayRef({2, 4, 16, 16})));
        auto r = runner::check_output(kernel::registry().find("eager")->launch(in),
                                      runner::reference_output(in), c.dtype);
        CHECK_MESSAGE(r.ok, r.message);
        // The bias changes the answer, but head_bias's: constant along a row, the softmax
        // takes it out (it measures what computing a modifier costs).
        core::Case plain = c;
        plain.score_mod.clear();
        kernel::Inputs pin = runner::make_inputs(plain);
        CHECK(runner::check_output(kernel::registry().find("eager")->launch(in),
                                   runner::reference_output(pin), c.dtype)
                  .ok == (mod == "head_bias"));
      }
    }
    // ALiBi by hand at one element: head 1 of 4 has slope 2^(-4); query 5, key 2: -3 * slope.
    core::Case c = make_case("eager", core::MaskKind::causal, 8, 8);
    c.score_mod = "alibi";
    at::Tensor bias = runner::score_bias(c, at::Tensor());
    CHECK(bias.index({0, 1, 5, 2}).item<double>() == doctest::Approx(-3.0 / 16));
    // softcap: eager's scores are capped, and sdpa.math cannot, so it skips naming it.
    c.score_mod = "softcap:2";
    const kernel::Variant* math = kernel::registry().find("sdpa.math");
    const auto why = kernel::unsupported(*math, c);
    REQUIRE(why);
    CHECK(why->starts_with("sdpa.math computes no score modifier softcap (kernels that do: eager"));
    kernel::Inputs in = runner::make_inputs(c);
    at::Tensor capped = kernel::registry().find("eager")->launch(in);
    core::Case plain = c;
    plain.score_mod.clear();
    at::Tensor uncapped = kernel::registry().find("eager")->launch(runner::make_inputs(plain));
    CHECK_FALSE(at::allclose(capped, uncapped));
  }

  TEST_CASE("padding from variable lengths masks the keys past each sequence's length") {
    core::Case c = make_case("eager", core::MaskKind::padding, 16, 16);
    c.seq_lens = {16, 5};
    kernel::Inputs in = runner::make_inputs(c);
    REQUIRE(in.mask.defined());
    CHECK(in.mask[1][0][0].sum().item<int64_t>() == 5);
    CHECK(in.mask[0][0][0].sum().item<int64_t>() == 16);
    auto r = run_and_check(c);
    CHECK_MESSAGE(r.ok, r.message);
  }

  TEST_CASE("a query row that sees no key gives zeros in every kernel, not NaN") {
    // Sequence 1 has 5 valid keys; under a window of 8, queries past position 12 see none.
    for (const char* k : {"sdpa.math", "eager", "cpu.naive", "cpu.flash"}) {
      core::Case c = make_case(k, core::MaskKind::sliding_window, 24, 24);
      c.seq_lens = {24, 5};
      CAPTURE(k);
      auto r = run_and_check(c);
      CHECK_MESSAGE(r.ok, r.message);
    }
  }

  TEST_CASE("decode with variable lengths: queries sit at the end of each sequence") {
    core::Case c = make_case("eager", core::MaskKind::causal, 2, 10);
    c.seq_lens = {10, 6};
    kernel::Inputs in = runner::make_inputs(c);
    REQUIRE(in.mask.defined());
    // Sequence 1: the two queries are tokens 4 and 5 of 6, seeing 5 and 6 keys.
    CHECK(in.mask[1][0][0].sum().item<int64_t>() == 5);
    CHECK(in.mask[1][0][1].sum().item<int64_t>() == 6);
    CHECK(in.mask[0][0][0].sum().item<int64_t>() == 9);
    for (const char* k : {"sdpa.math", "eager", "cpu.naive", "cpu.flash"}) {
      c.kernel = k;
      CAPTURE(k);
      auto r = run_and_check(c);
      CHECK_MESSAGE(r.ok, r.message);
    }
  }

  TEST_CASE("a custom additive mask works at every dtype") {
    char dir[] = "/tmp/attnprof-mask-XXXXXX";
    REQUIRE(mkdtemp(dir));
    const std::string path = std::string(dir) + "/m.txt";
    {
      std::ofstream f(path);
      for (int i = 0; i < 8; ++i) {
        for (int j = 0; j < 8; ++j) f << (j > i ? "-inf " : (j == i ? "0.5 " : "0 "));
        f << "\n";
      }
    }
    for (auto dt : {core::DType::fp32, core::DType::bf16, core::DType::fp16}) {
      core::Case c = make_case("eager", core::MaskKind::custom, 8, 8);
      c.mask_file = path;
      c.dtype = dt;
      CAPTURE(core::to_string(dt));
      auto r = run_and_check(c);
      CHECK_MESSAGE(r.ok, r.message);
    }
    std::remove(path.c_str());
    rmdir(dir);
  }

  TEST_CASE("the CPU fused SDPA path runs where LibTorch supports it") {
    core::Case c = make_case("sdpa.flash", core::MaskKind::causal, 32, 32);
    auto r = run_and_check(c);
    CHECK_MESSAGE(r.ok, r.message);
  }

  TEST_CASE("fp16 and bf16 inputs are checked with their own tolerances") {
    for (auto dt : {core::DType::bf16, core::DType::fp16}) {
      core::Case c = make_case("eager", core::MaskKind::causal, 16, 16);
      c.dtype = dt;
      auto r = run_and_check(c);
      CHECK_MESSAGE(r.ok, r.message);
    }
  }
}

TEST_SUITE("runner::check") {
  TEST_CASE("a wrong output is a failure that names the largest error and where") {
    core::Case c = make_case("eager", core::MaskKind::none, 8, 8);
    kernel::Inputs in = runner::make_inputs(c);
    at::Tensor ref = runner::reference_output(in);
    at::Tensor bad = ref.clone();
    bad[1][2][3][4] += 0.5;
    auto r = runner::check_output(bad, ref, core::DType::fp32);
    CHECK_FALSE(r.ok);
    CHECK(r.max_abs_error == doctest::Approx(0.5).epsilon(1e-3));
    CHECK(r.message.find("max abs error 0.5 at [1, 2, 3, 4]") != std::string::npos);
    CHECK(runner::check_output(ref, ref, core::DType::fp32).ok);
  }

  TEST_CASE("NaN in the output is a mismatch") {
    core::Case c = make_case("eager", core::MaskKind::none, 8, 8);
    at::Tensor ref = runner::reference_output(runner::make_inputs(c));
    at::Tensor bad = ref.clone();
    bad[0][0][0][0] = std::numeric_limits<float>::quiet_NaN();
    CHECK_FALSE(runner::check_output(bad, ref, core::DType::fp32).ok);
  }

  TEST_CASE("shape mismatches are reported") {
    at::Tensor a = at::zeros({1, 2, 3, 4}), b = at::zeros({1, 2, 3, 5});
    auto r = runner::check_output(a, b, core::DType::fp32);
    CHECK_FALSE(r.ok);
    CHECK(r.message == "output shape 1x2x3x4 differs from the reference's 1x2x3x5");
  }
}

TEST_SUITE("scenario::shipped") {
  TEST_CASE("every shipped suite loads against the real registry") {
    scenario::LoadOptions lo;
    lo.kernels = kernel::registry().names();
    // aoti-*: their packages are build artifacts, absent here; the loader takes the names.
    for (const char* f :
         {"smoke", "cpu", "bert", "gpt2", "llama", "mistral", "aoti-cpu", "aoti-gpu"}) {
      const std::string path = std::string(ATTNPROF_SOURCE_DIR) + "/scenarios/" + f + ".yaml";
      CAPTURE(path);
      try {
        CHECK(!scenario::load({path}, lo).cases.empty());
      } catch (const util::InputError& e) {
        FAIL(e.what());
      }
    }
    CHECK(!scenario::load_text(scenario::embedded_smoke_suite(), scenario::smoke_suite_name(), lo)
               .cases.empty());
  }
}

TEST_SUITE("runner::Runner") {
  TEST_CASE("a prepared session keeps its own case: the caller's may change or go away") {
    // attnprof ab's worker prepares a case from a temporary and measures it in later requests.
    runner::Runner r(env::describe(), {.trace = false});
    auto c = std::make_unique<core::Case>(make_case("eager", core::MaskKind::causal, 8, 8));
    c->level = core::Level::block;
    auto session = r.prepare(*c);
    REQUIRE(session->ready());
    *c = make_case("eager", core::MaskKind::none, 3, 40, 8, 2);  // other shapes, kernel level
    auto samples = session->batch(5e9, 1, 3);  // three calls (a batch ends at 5 s or 3 calls)
    CHECK(session->ready());
    CHECK(samples.size() == 3);
  }

  TEST_CASE("a case's thread count does not leak into the next case") {
    const int default_threads = at::get_num_threads();
    runner::Runner r(env::describe(), {.trace = false});
    core::Case one = make_case("eager", core::MaskKind::none, 8, 8);
    one.hardware.threads = 1;
    one.measure.min_samples = 6;
    one.measure.time_budget_s = 0.5;
    one.measure.warmup_ms = 1;
    core::Case dflt = one;
    dflt.hardware.threads = 0;
    CHECK(r.run(one).spec.hardware.threads == 1);
    CHECK(r.run(dflt).spec.hardware.threads == default_threads);
  }
}

namespace {

// The CPUs each thread of this process may run on, by thread id.
std::map<pid_t, std::vector<int>> threads_cpus() {
  std::map<pid_t, std::vector<int>> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    const pid_t tid = static_cast<pid_t>(std::stol(task.path().filename().string()));
    out[tid] = util::allowed_cpus(tid);
  }
  return out;
}

}  // namespace

TEST_SUITE("runner::thread_placement") {
  TEST_CASE("ATTNPROF_CPU_ORDER: the allowed CPUs in its order; anything else is no order") {
    const std::vector<int> all = util::allowed_cpus();
    const std::vector<int> reversed(all.rbegin(), all.rend());
    auto order = [](const char* text) {
      setenv("ATTNPROF_CPU_ORDER", text, 1);
      std::vector<int> out = runner::cpu_order_from_env();
      unsetenv("ATTNPROF_CPU_ORDER");
      return out;
    };
    CHECK(runner::cpu_order_from_env().empty());  // unset
    CHECK(order(fmt::format("{}", fmt::join(reversed, ",")).c_str()) == reversed);
    CHECK(order(fmt::format("{},{},{}", all[0], all[0], CPU_SETSIZE + 5).c_str()) ==
          std::vector<int>{all[0]});  // a CPU once; one this process may not use is left out
    CHECK(order("").empty());
    CHECK(order("one,two").empty());
    CHECK(order("0,-1").empty());
    CHECK(order("0;1").empty());
  }

  TEST_CASE("a CPU case binds intra-op thread i to the i-th CPU; the calling thread stays free") {
    const std::vector<int> all = util::allowed_cpus();
    if (all.size() < 2) {
      MESSAGE("one CPU allowed here: nothing to place");
      return;
    }
    const std::vector<int> order(all.rbegin(), all.rend());
    setenv("ATTNPROF_CPU_ORDER", fmt::format("{}", fmt::join(order, ",")).c_str(), 1);
    runner::Runner r(env::describe(), {.trace = false});
    core::Case c = make_case("eager", core::MaskKind::none, 8, 8);
    c.hardware.threads = 2;
    auto session = r.prepare(c);
    unsetenv("ATTNPROF_CPU_ORDER");
    REQUIRE(session->ready());
    auto cpus = threads_cpus();
    CHECK(cpus.at(gettid()) == all);  // free between batches: threads it starts are not pinned
    int on_second = 0;
    for (const auto& [tid, its] : cpus)
      if (tid != gettid() && its == std::vector<int>{order[1]}) ++on_second;
    CHECK(on_second == 1);  // LibTorch's second intra-op thread, alone on the order's second CPU
    session->batch(1e6, 1, 2);
    CHECK(threads_cpus().at(gettid()) == all);  // bound for the batch only
    runner::free_intra_op_threads(all);
    for (const auto& [tid, its] : threads_cpus()) CHECK(its == all);
  }

  TEST_CASE("the calling thread on one CPU for a scope, on its CPUs again after") {
    const std::vector<int> all = util::allowed_cpus();
    {
      runner::CallingThreadOn on(all.back());
      CHECK(util::allowed_cpus(gettid()) == std::vector<int>{all.back()});
    }
    CHECK(util::allowed_cpus(gettid()) == all);
    {
      runner::CallingThreadOn none(-1);
      CHECK(util::allowed_cpus(gettid()) == all);
    }
  }
}

TEST_CASE("kernel::builtin_names is the registry's list, so attnprof checks names without LibTorch") {
  CHECK(kernel::builtin_names() == kernel::registry().names());
}
