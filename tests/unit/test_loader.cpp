// scenario::load and load_text: how workloads expand into cases and keys, and the exact message
// for every kind of bad scenario.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "harness/scenario/scenario.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;

namespace {

const std::string data = std::string(ATTNPROF_TEST_DATA) + "/scenarios/";

// The registry names the runner will have (worker/kernel), for did-you-mean and globs.
scenario::LoadOptions registry() {
  return {{"sdpa.auto", "sdpa.math", "sdpa.flash", "sdpa.efficient", "sdpa.cudnn", "eager",
           "cpu.naive", "cpu.flash", "cuda.naive", "cuda.flash", "cuda.decode", "cuda.varlen"}};
}

// Every diagnostic of loading `yaml` as "t.yaml", one per line; "" when it loads.
std::string errors(const std::string& yaml, const scenario::LoadOptions& opts = registry()) {
  try {
    scenario::load_text(yaml, "t.yaml", opts);
    return "";
  } catch (const util::InputError& e) {
    return e.what();
  }
}

// Element by element, so that a failure shows the keys that differ.
void check_keys(const scenario::Suite& s, const std::vector<std::string>& expected) {
  REQUIRE(s.cases.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(s.cases[i].key == expected[i]);
}

std::vector<std::string> keys(const scenario::Suite& s) {
  std::vector<std::string> out;
  for (const auto& c : s.cases) out.push_back(c.key);
  return out;
}

}  // namespace

TEST_SUITE("scenario::loader") {
  TEST_CASE("a prefill workload expands to the cartesian product with readable keys") {
    auto s = scenario::load_text(R"(
model: bert-base
workloads:
  - name: prefill
    batch: [1, 4]
    seq_len: [128, 256, 512]
    mask: [none, causal]
    kernels: [sdpa.math, eager]
)",
                                 "t.yaml", registry());
    REQUIRE(s.cases.size() == 2 * 3 * 2 * 2);
    CHECK(s.cases.front().key == "bert-base/prefill/b1-s128-fp32-none/sdpa.math");
    CHECK(s.cases[1].key == "bert-base/prefill/b1-s128-fp32-none/eager");
    CHECK(s.cases.back().key == "bert-base/prefill/b4-s512-fp32-causal/eager");
    const auto& c = s.cases.front();
    CHECK(c.q_len == 128);
    CHECK(c.kv_len == 128);
    CHECK(c.model.heads == 12);
    CHECK(c.model.head_dim == 64);
    CHECK(c.suite == "t");
    CHECK(c.workload == "prefill");
    CHECK_FALSE(c.scale);
    CHECK(c.loc.file == "t.yaml");
    CHECK(c.loc.line == 4);
    CHECK(s.files == std::vector<std::string>{"t.yaml"});
  }

  TEST_CASE("decode: q_len 1 (or speculative tokens) against kv_len; phase from the name") {
    auto s = scenario::load_text(R"(
model: llama-2-7b
dtype: bf16
workloads:
  - name: decode
    batch: [1, 16]
    kv_len: [4096]
    kernels: [sdpa.flash]
  - name: speculative
    phase: decode
    kv_len: 2048
    q_len: [4, 8]
    mask: causal
    kernels: [sdpa.flash]
  - kv_len: 1024
    kernels: [cuda.decode]
)",
                                 "t.yaml", registry());
    check_keys(s, {"llama-2-7b/decode/b1-q1-kv4096-bf16-none/sdpa.flash",
                   "llama-2-7b/decode/b16-q1-kv4096-bf16-none/sdpa.flash",
                   "llama-2-7b/decode/b1-q4-kv2048-bf16-causal/sdpa.flash",
                   "llama-2-7b/decode/b1-q8-kv2048-bf16-causal/sdpa.flash",
                   "llama-2-7b/decode/b1-q1-kv1024-bf16-none/cuda.decode"});
    CHECK(s.cases[0].q_len == 1);
    CHECK(s.cases[0].kv_len == 4096);
    CHECK(s.cases[0].phase == core::Phase::decode);
    CHECK(s.cases[3].q_len == 8);
    CHECK(s.cases[4].workload == "workload3");
  }

  TEST_CASE("settings: scenario defaults, per-workload overrides, units") {
    auto s = scenario::load_text(R"(
name: mine
model: gpt2
hardware: {device: "cuda:1", gpu: "H100|H200", clock_policy: require-locked, peak_gbps: 4800}
measure: {warmup: 200ms, min_samples: 30, max_noise: 0.5%, time_budget: 10s}
gate: {tolerance: 3%}
kernels: [sdpa.flash]
workloads:
  - seq_len: 128
  - seq_len: 256
    measure: {warmup_ms: 50, timeout_s: 2, trace: false, trace_calls: 3}
    gate: {tolerance: 1.5%}
    hardware: {threads: 8}
)",
                                 "t.yaml", registry());
    REQUIRE(s.cases.size() == 2);
    const auto& a = s.cases[0];
    CHECK(a.suite == "mine");
    CHECK(a.hardware.device == "cuda:1");
    CHECK(a.hardware.gpu_pattern == "H100|H200");
    CHECK(a.hardware.clock_policy == "require-locked");
    CHECK(a.hardware.peak_gbps == 4800);
    CHECK(a.measure.warmup_ms == doctest::Approx(200));
    CHECK(a.measure.min_samples == 30);
    CHECK(a.measure.target_rel_ci == doctest::Approx(0.005));
    CHECK(a.measure.time_budget_s == doctest::Approx(10));
    CHECK(a.measure.trace);
    CHECK(a.gate.tolerance == doctest::Approx(0.03));
    const auto& b = s.cases[1];
    CHECK(b.measure.warmup_ms == doctest::Approx(50));
    CHECK(b.measure.min_samples == 30);  // inherited key by key
    CHECK(b.measure.time_budget_s == doctest::Approx(2));
    CHECK_FALSE(b.measure.trace);
    CHECK(a.measure.trace_calls == 10);  // the default
    CHECK(b.measure.trace_calls == 3);
    CHECK(b.gate.tolerance == doctest::Approx(0.015));
    CHECK(b.hardware.threads == 8);
    CHECK(b.hardware.device == "cuda:1");
  }

  TEST_CASE("defaults when a scenario says little") {
    auto s = scenario::load_text("model: bert-base\nworkloads: [{seq_len: 64}]\n", "x/y/z.yaml");
    REQUIRE(s.cases.size() == 1);
    const auto& c = s.cases[0];
    CHECK(c.key == "bert-base/prefill/b1-s64-fp32-none/sdpa.auto");
    CHECK(c.suite == "z");
    CHECK(c.hardware.device == "cpu");
    CHECK(c.level == core::Level::kernel);
    CHECK(c.measure.warmup_ms == 200);
    CHECK(c.gate.tolerance == doctest::Approx(0.05));
  }

  TEST_CASE("every distinguishing parameter is in the key") {
    auto s = scenario::load_text(R"(
model: mistral-7b
dtype: bf16
kernels: [sdpa.flash]
workloads:
  - {seq_len: 8192, mask: sliding_window}
  - {seq_len: 8192, mask: sliding_window, window: 1024}
  - {seq_len: 1024, level: [block, layer], mask: causal}
  - {seq_len: 1024, scale: 0.125, seed: 7}
  - {batch: 3, seq_len: 512, seq_lens: [512, 100, 7]}
)",
                                 "t.yaml", registry());
    check_keys(s, {"mistral-7b/prefill/b1-s8192-bf16-window4096/sdpa.flash",
                   "mistral-7b/prefill/b1-s8192-bf16-window1024/sdpa.flash",
                   "mistral-7b/prefill/b1-s1024-bf16-causal-block/sdpa.flash",
                   "mistral-7b/prefill/b1-s1024-bf16-causal-layer/sdpa.flash",
                   "mistral-7b/prefill/b1-s1024-bf16-none-scale0.125-seed7/sdpa.flash",
                   "mistral-7b/prefill/b3-s512-varlen.52eaf833-bf16-padding/sdpa.flash"});
    CHECK(s.cases[0].window == 4096);
    CHECK(s.cases[0].mask == core::MaskKind::sliding_window);
    CHECK(s.cases[3].level == core::Level::layer);
    CHECK(s.cases[4].scale == 0.125);
    CHECK(s.cases[4].seed == 7);
    CHECK(s.cases[5].seq_lens == std::vector<int>{512, 100, 7});
    CHECK(s.cases[5].mask == core::MaskKind::padding);
  }

  TEST_CASE("variable lengths: explicit list sets batch; a seeded distribution is reproducible") {
    auto s = scenario::load_text(R"(
model: llama-3-8b
kernels: [cuda.varlen]
workloads:
  - {seq_lens: [100, 300, 200], mask: causal}
  - {batch: 8, seq_len: 1024, seq_lens: {distribution: uniform, min: 256, seed: 3}}
  - {batch: 8, kv_len: 4096, seq_lens: {max: 2048}}
)",
                                 "t.yaml", registry());
    REQUIRE(s.cases.size() == 3);
    CHECK(s.cases[0].batch == 3);
    CHECK(s.cases[0].q_len == 300);  // padded to the longest
    CHECK(s.cases[0].mask == core::MaskKind::causal);
    const auto& d = s.cases[1].seq_lens;
    REQUIRE(d.size() == 8);
    for (int len : d) {
      CHECK(len >= 256);
      CHECK(len <= 1024);
    }
    auto again = scenario::load_text(
        "model: llama-3-8b\nkernels: [cuda.varlen]\nworkloads:\n"
        "  - {seq_len: 1024, batch: 8, seq_lens: {seed: 3, min: 256}}\n",
        "u.yaml", registry());
    CHECK(again.cases[0].seq_lens == d);
    CHECK(again.cases[0].key == s.cases[1].key);
    CHECK(s.cases[2].phase == core::Phase::decode);
    CHECK(s.cases[2].seq_lens.size() == 8);
    for (int len : s.cases[2].seq_lens) CHECK(len <= 2048);
  }

  TEST_CASE("expansion is pinned: keys, seeds and drawn lengths are the same on every platform") {
    // Literal values: a change to the expansion, the key or the length draw renames stored
    // history (its cases no longer meet their past) and must be seen here first.
    auto s = scenario::load_text(R"(
model: llama-3-8b
kernels: [cuda.varlen, sdpa.math]
workloads:
  - {batch: 4, seq_len: 1024, seq_lens: {distribution: uniform, min: 256, seed: 3}}
  - {batch: 2, kv_len: 4096, seq_lens: {max: 2048, seed: 11}}
  - {seq_len: 512, seed: 9}
)",
                                 "t.yaml", registry());
    check_keys(s, {"llama-3-8b/prefill/b4-s1024-varlen.bf9fa1c8-fp32-padding/cuda.varlen",
                   "llama-3-8b/prefill/b4-s1024-varlen.bf9fa1c8-fp32-padding/sdpa.math",
                   "llama-3-8b/decode/b2-q1-kv4096-varlen.28f7afef-fp32-padding/cuda.varlen",
                   "llama-3-8b/decode/b2-q1-kv4096-varlen.28f7afef-fp32-padding/sdpa.math",
                   "llama-3-8b/prefill/b1-s512-fp32-none-seed9/cuda.varlen",
                   "llama-3-8b/prefill/b1-s512-fp32-none-seed9/sdpa.math"});
    CHECK(s.cases[0].seq_lens == std::vector<int>{772, 379, 746, 700});
    CHECK(s.cases[1].seq_lens == s.cases[0].seq_lens);  // one draw per workload, every kernel
    CHECK(s.cases[2].seq_lens == std::vector<int>{158, 930});
    CHECK(s.cases[0].seed == 0);  // no seed: the inputs' default
    CHECK(s.cases[4].seed == 9);
  }

  TEST_CASE("exclude drops matching combinations; include adds cases") {
    auto s = scenario::load_text(R"(
model: llama-2-7b
dtype: [fp16, bf16]
workloads:
  - name: prefill
    batch: [1, 4]
    seq_len: [512, 2048]
    kernels: [sdpa.*]
    exclude:
      - {kernels: sdpa.cudnn, dtype: fp16}
      - {batch: 4, seq_len: 2048}
      - {kernels: [sdpa.auto, sdpa.math]}
    include:
      - {batch: 64, seq_len: 4096, dtype: bf16, kernels: sdpa.flash}
)",
                                 "t.yaml", registry());
    // dtype 2 x batch 2 x seq 2 x kernels {flash, efficient, cudnn} = 24; minus cudnn+fp16 (4),
    // minus b4-s2048 of what is left (2 + 3), plus one.
    CHECK(s.cases.size() == 24 - 4 - 5 + 1);
    auto k = keys(s);
    CHECK(std::count(k.begin(), k.end(), "llama-2-7b/prefill/b64-s4096-bf16-none/sdpa.flash") == 1);
    CHECK(std::count(k.begin(), k.end(), "llama-2-7b/prefill/b1-s512-fp16-none/sdpa.cudnn") == 0);
    CHECK(std::count(k.begin(), k.end(), "llama-2-7b/prefill/b1-s512-bf16-none/sdpa.cudnn") == 1);
    CHECK(std::count(k.begin(), k.end(), "llama-2-7b/prefill/b4-s2048-bf16-none/sdpa.flash") == 0);
  }

  TEST_CASE("kernel globs expand against the registry; plugin ops pass through") {
    auto s = scenario::load_text(
        "model: gpt2\nworkloads: [{seq_len: 64, kernels: [cpu.*, 'op:my_ns::attn', cpu.flash]}]\n",
        "t.yaml", registry());
    check_keys(
        s, {"gpt2/prefill/b1-s64-fp32-none/cpu.naive", "gpt2/prefill/b1-s64-fp32-none/cpu.flash",
            "gpt2/prefill/b1-s64-fp32-none/op:my_ns::attn"});
    // Without the registry names are literal and unchecked.
    auto lit = scenario::load_text("model: gpt2\nworkloads: [{seq_len: 64, kernels: [whatever]}]\n",
                                   "t.yaml");
    CHECK(lit.cases[0].kernel == "whatever");
  }

  TEST_CASE("inline models, with a preset as base") {
    auto s = scenario::load_text(R"(
models:
  tiny: {heads: 4, head_dim: 32}
  long-llama: {base: llama-2-7b, max_positions: 32768}
workloads:
  - {model: tiny, seq_len: 64}
  - {model: long-llama, seq_len: 16384, kernels: [sdpa.flash]}
)",
                                 "t.yaml", registry());
    REQUIRE(s.cases.size() == 2);
    CHECK(s.cases[0].model.kv_heads == 4);
    CHECK(s.cases[0].model.hidden == 128);
    CHECK(s.cases[0].model.mlp_hidden == 512);
    CHECK(s.cases[1].model.heads == 32);
    CHECK(s.cases[1].model.max_positions == 32768);
    CHECK(s.cases[1].key == "long-llama/prefill/b1-s16384-fp32-none/sdpa.flash");
  }

  TEST_CASE("aliases keep history across renames") {
    auto s = scenario::load_text(R"(
model: gpt2
kernels: [eager]
workloads: [{seq_len: [64, 128]}]
aliases:
  gpt2/prefill/b1-s64-fp32-none/eager: gpt2/prefill/b1-s64-fp32/eager
  "gpt2/prefill/b1-s128*": ["gpt-2/prefill/b1-s128*", "old/b1-s128*"]
)",
                                 "t.yaml", registry());
    CHECK(s.cases[0].aliases == std::vector<std::string>{"gpt2/prefill/b1-s64-fp32/eager"});
    CHECK(s.cases[1].aliases == std::vector<std::string>{"gpt-2/prefill/b1-s128-fp32-none/eager",
                                                         "old/b1-s128-fp32-none/eager"});
  }

  TEST_CASE("extends: defaults from a base file, relative to the file; child overrides") {
    auto s = scenario::load({data + "child.yaml"}, registry());
    REQUIRE(s.cases.size() == 4);
    const auto& c = s.cases[0];
    CHECK(c.key == "gpt2/prefill/b1-s256-fp16-none/sdpa.flash");
    CHECK(c.suite == "child");  // a base's name stays its own
    CHECK(c.hardware.device == "cuda");
    CHECK(c.measure.warmup_ms == doctest::Approx(100));
    CHECK(c.measure.min_samples == 30);
    CHECK(c.gate.tolerance == doctest::Approx(0.04));
    CHECK(s.files == std::vector<std::string>{data + "child.yaml"});
  }

  TEST_CASE("custom additive mask: file relative to the scenario, absolute in the case") {
    auto s = scenario::load({data + "custom_mask.yaml"}, registry());
    REQUIRE(s.cases.size() == 1);
    CHECK(s.cases[0].mask == core::MaskKind::custom);
    CHECK(s.cases[0].mask_file.ends_with("tests/data/scenarios/alibi.mask"));
    CHECK(s.cases[0].mask_file.front() == '/');
    CHECK(s.cases[0].key == "bert-base/prefill/b1-s8-fp32-custom.alibi/sdpa.auto");
  }

  TEST_CASE("keys are stable across runs, key order in the file and file order") {
    auto a = scenario::load({data + "order_a.yaml"}, registry());
    auto b = scenario::load({data + "order_b.yaml"}, registry());
    auto ka = keys(a), kb = keys(b);
    CHECK(ka.size() == 16);
    CHECK(ka == keys(scenario::load({data + "order_a.yaml"}, registry())));
    // The same matrix with keys and list values in another order: the same keys.
    CHECK(std::set(ka.begin(), ka.end()) == std::set(kb.begin(), kb.end()));
    CHECK(kb.size() == 16);
    // Keys of a mapping in another order: also the same case order (the matrix varies its
    // axes in a fixed order, not in the order they were written).
    auto shuffled = scenario::load_text(
        "workloads:\n  - kernels: [sdpa.math, eager]\n    mask: [none, causal]\n"
        "    seq_len: [128, 256]\n    batch: [1, 2]\n    name: prefill\nmodel: bert-base\n",
        "order_c.yaml", registry());
    CHECK(keys(shuffled) == ka);
    auto ab = keys(scenario::load({data + "order_a.yaml", data + "other.yaml"}, registry()));
    auto ba = keys(scenario::load({data + "other.yaml", data + "order_a.yaml"}, registry()));
    CHECK(ab.size() == 18);
    CHECK(std::set(ab.begin(), ab.end()) == std::set(ba.begin(), ba.end()));
  }

  TEST_CASE("every scenario shipped in scenarios/ loads against the registry") {
    for (const char* f : {"smoke.yaml", "bert.yaml", "gpt2.yaml", "llama.yaml", "mistral.yaml",
                          "cpu.yaml", "aoti-cpu.yaml", "aoti-gpu.yaml"}) {
      CAPTURE(f);
      auto s = scenario::load({std::string(ATTNPROF_SOURCE_DIR) + "/scenarios/" + f}, registry());
      CHECK(s.cases.size() > 0);
    }
    auto smoke = scenario::load_text(scenario::embedded_smoke_suite(), scenario::smoke_suite_name(),
                                     registry());
    CHECK(smoke.cases.size() == 12 + 4);
    CHECK(smoke.cases[0].key == "bert-base/prefill/b1-s128-fp32-none/sdpa.auto");
    CHECK(smoke.cases[0].suite == "smoke");
    CHECK(smoke.cases[0].hardware.device == "cpu");
  }
}

TEST_SUITE("scenario::loader errors") {
  TEST_CASE("unknown keys with did-you-mean, at the key") {
    CHECK(errors(R"(model: bert-base
workloads:
  - seq_len: 64
    hdim: 3
    batchh: 2
mesure: {}
measure: {warmpu: 10ms}
)") == "t.yaml:4:5: unknown key \"hdim\" in workload\n"
       "t.yaml:5:5: unknown key \"batchh\" in workload (did you mean \"batch\"?)\n"
       "t.yaml:6:1: unknown key \"mesure\" in the scenario (did you mean \"measure\"?)\n"
       "t.yaml:7:11: unknown key \"warmpu\" in measure (did you mean \"warmup\"?)");
    CHECK(errors("models:\n  m: {heads: 4, hdim: 64}\nworkloads: [{model: m, seq_len: 8}]\n") ==
          "t.yaml:2:3: model m: missing head_dim\n"
          "t.yaml:2:17: unknown key \"hdim\" in model m (did you mean \"head_dim\"?)\n"
          "t.yaml:3:21: unknown model \"m\"");
  }

  TEST_CASE("wrong types and units") {
    CHECK(errors(R"(model: bert-base
measure: {warmup: 200, time_budget: 10 s, max_noise: 0.5, min_samples: many}
gate: {tolerance: 3}
hardware: {device: gpu, threads: -1}
workloads:
  - seq_len: 1.5
    batch: [1, [2]]
    dtype: fp64
)") == "t.yaml:2:19: warmup: expected a duration such as 200ms or 10s (a unit is required), got "
       "\"200\"\n"
       "t.yaml:2:54: max_noise: expected a percentage such as 3%, got \"0.5\"\n"
       "t.yaml:2:72: min_samples: expected an integer, got \"many\"\n"
       "t.yaml:3:19: tolerance: expected a percentage such as 3%, got \"3\"\n"
       "t.yaml:4:20: device: expected cpu, cuda or cuda:N, got \"gpu\"\n"
       "t.yaml:4:34: threads must be at least 0, got -1\n"
       "t.yaml:6:14: seq_len: expected an integer, got \"1.5\"\n"
       "t.yaml:7:16: batch: expected a value, got a list\n"
       "t.yaml:8:12: dtype: expected one of fp32, fp16, bf16, got \"fp64\"");
    CHECK(errors("model: gpt2\nmeasure: {warmup: 1 fortnight}\nworkloads: [{seq_len: 8}]\n") ==
          "t.yaml:2:19: warmup: expected a duration such as 200ms or 10s, got \"1 fortnight\"");
    // Durations past what a case's deadline (nanoseconds on the steady clock) holds: refused at
    // the value, where they used to pass and fail the run as "worker hung". A day is the most.
    CHECK(errors("model: gpt2\nmeasure: {timeout_s: 1e10, warmup: 1e13ms}\nworkloads: [{seq_len: "
                 "8}]\n") ==
          "t.yaml:2:22: timeout_s must be at most 86400s (a day), got 1e10\n"
          "t.yaml:2:36: warmup must be at most 86400s (a day), got 1e13ms");
    CHECK(errors("model: gpt2\nmeasure: {time_budget: 1e308s, warmup_ms: 86400001}\nworkloads: "
                 "[{seq_len: 8}]\n") ==
          "t.yaml:2:24: time_budget must be at most 86400s (a day), got 1e308s\n"
          "t.yaml:2:43: warmup_ms must be at most 86400s (a day), got 86400001");
    CHECK(errors("model: gpt2\nmeasure: {time_budget: 1440min, warmup: 86400000ms}\nworkloads: "
                 "[{seq_len: 8}]\n") == "");
    CHECK(errors("model: gpt2\nmeasure: {min_samples: 50, max_samples: 10}\nworkloads: [{seq_len: "
                 "8}]\n") == "t.yaml:2:10: min_samples (50) exceeds max_samples (10)");
    CHECK(errors("model: gpt2\nmeasure: {trace_calls: 0}\nworkloads: [{seq_len: 8}]\n") ==
          "t.yaml:2:24: trace_calls must be at least 1, got 0");
    CHECK(errors("model: gpt2\nhardware: {gpu: H100}\nworkloads: [{seq_len: 8}]\n") ==
          "t.yaml:2:17: gpu: a GPU pattern applies only to a cuda device (device is cpu)");
    CHECK(errors("model: gpt2\nhardware: {device: cuda, gpu: \"H1(\"}\nworkloads: [{seq_len: 8}]\n")
              .starts_with("t.yaml:2:31: gpu: invalid pattern \"H1(\": "));
  }

  TEST_CASE("impossible geometry") {
    CHECK(errors(R"(models:
  odd: {heads: 12, kv_heads: 5, head_dim: 100}
  wide: {heads: 4, head_dim: 512}
workloads: [{model: bert-base, seq_len: 1024}]
)") == "t.yaml:2:3: model odd: heads (12) must be a multiple of kv_heads (5)\n"
       "t.yaml:2:3: model odd: unsupported head_dim 100 (a multiple of 8, at most 256)\n"
       "t.yaml:3:3: model wide: unsupported head_dim 512 (a multiple of 8, at most 256)\n"
       "t.yaml:4:41: seq_len 1024 exceeds the maximum positions of bert-base (512)");
    CHECK(errors("model: llama-2-7b\nworkloads: [{kv_len: 8192, phase: decode}]\n") ==
          "t.yaml:2:22: kv_len 8192 exceeds the maximum positions of llama-2-7b (4096)");
    CHECK(
        errors("model: mistral-7b\nworkloads: [{seq_len: [2048, 8192], mask: sliding_window}]\n") ==
        "t.yaml:2:43: window 4096 is not smaller than the sequence (2048): the mask is plain "
        "causal; use mask causal");
    CHECK(errors("model: gpt2\nworkloads: [{seq_len: 512, mask: sliding_window, window: 512}]\n") ==
          "t.yaml:2:58: window 512 is not smaller than the sequence (512): the mask is plain "
          "causal; use mask causal");
    CHECK(errors("model: gpt2\nworkloads: [{seq_len: 512, mask: sliding_window}]\n") ==
          "t.yaml:2:34: mask sliding_window needs a window: set window: or use a model with "
          "sliding_window (gpt2 has none)");
    CHECK(errors("model: gpt2\nworkloads: [{phase: decode, kv_len: 4, q_len: 8}]\n") ==
          "t.yaml:2:47: q_len 8 exceeds kv_len 4");
  }

  TEST_CASE("phase-specific keys and missing lengths") {
    CHECK(errors("model: gpt2\nworkloads:\n  - {name: prefill, seq_len: 64, kv_len: 64, q_len: 1}\n"
                 "  - {name: decode, seq_len: 64}\n  - {mask: causal}\n") ==
          "t.yaml:3:42: kv_len applies to decode workloads (prefill attends over seq_len)\n"
          "t.yaml:3:53: q_len applies to decode workloads (prefill has q_len = seq_len)\n"
          "t.yaml:4:5: decode needs kv_len (the length of the KV cache)\n"
          "t.yaml:4:29: seq_len applies to prefill workloads (decode uses kv_len and q_len)\n"
          "t.yaml:5:5: prefill needs seq_len");
    CHECK(errors("workloads: [{seq_len: 64}]\n") ==
          "t.yaml:1:13: no model: set model: in the workload or at the top level");
  }

  TEST_CASE("masks and their companions") {
    CHECK(errors("model: gpt2\nworkloads:\n  - {seq_len: 64, mask: padding}\n"
                 "  - {seq_len: 64, window: 16}\n  - {seq_len: 64, mask: custom}\n"
                 "  - {seq_len: 64, mask: custom, mask_file: nowhere.pt}\n"
                 "  - {seq_len: 64, mask_file: x.pt}\n  - {seq_len: 64, mask: casual}\n") ==
          "t.yaml:3:25: mask padding needs seq_lens (the valid length of each sequence)\n"
          "t.yaml:4:27: window applies only to mask sliding_window\n"
          "t.yaml:5:25: mask custom needs mask_file: (an additive mask file)\n"
          "t.yaml:6:44: mask_file: nowhere.pt: cannot open file\n"
          "t.yaml:7:30: mask_file applies only to mask custom\n"
          "t.yaml:8:25: mask: expected one of none, causal, padding, sliding_window, custom, "
          "document, prefix, got \"casual\" (did you mean \"causal\"?)");
    CHECK(errors("model: gpt2\nworkloads:\n  - {batch: 2, seq_len: 64, seq_lens: [64, 32, 16]}\n"
                 "  - {seq_len: 64, seq_lens: [65]}\n"
                 "  - {seq_len: 64, seq_lens: {max: 100}}\n"
                 "  - {seq_len: 64, seq_lens: {min: 50, max: 40, distribution: normal}}\n") ==
          "t.yaml:3:39: seq_lens has 3 lengths but batch is 2\n"
          "t.yaml:4:29: seq_lens: length 65 exceeds seq_len 64\n"
          "t.yaml:5:35: seq_lens: max 100 exceeds seq_len 64\n"
          "t.yaml:6:29: seq_lens: min 50 exceeds max 40\n"
          "t.yaml:6:62: distribution: expected one of uniform, got \"normal\"");
  }

  TEST_CASE("document and prefix masks, score modifiers: cases, keys and bad values") {
    auto s = scenario::load_text(
        "model: gpt2\nkernels: [flex]\nworkloads:\n"
        "  - {mask: document, seq_lens: [100, 28], score_mod: [none, alibi, 'softcap:30']}\n"
        "  - {seq_len: 64, batch: 2, mask: prefix, prefix: 16, score_mod: head_bias}\n",
        "t.yaml", registry());
    check_keys(s, {"gpt2/prefill/b1-s128-fp32-document.02cbfe02/flex",
                   "gpt2/prefill/b1-s128-fp32-document.02cbfe02-alibi/flex",
                   "gpt2/prefill/b1-s128-fp32-document.02cbfe02-softcap30/flex",
                   "gpt2/prefill/b2-s64-fp32-prefix16-head_bias/flex"});
    CHECK(s.cases[0].documents == std::vector<int>{100, 28});
    CHECK(s.cases[0].seq_lens.empty());  // packed, not padded
    CHECK(s.cases[0].mask == core::MaskKind::document);
    CHECK(s.cases[2].score_mod == "softcap:30");
    CHECK(s.cases[3].prefix == 16);
    CHECK(s.cases[3].batch == 2);
    CHECK(errors("model: gpt2\nworkloads:\n  - {seq_len: 64, score_mod: alibii}\n"
                 "  - {seq_len: 64, score_mod: 'softcap:0'}\n"
                 "  - {seq_len: 64, mask: document, seq_lens: [30, 30]}\n"
                 "  - {seq_len: 64, mask: document}\n"
                 "  - {seq_len: 64, mask: prefix}\n"
                 "  - {seq_len: 64, prefix: 8}\n"
                 "  - {seq_len: 64, mask: prefix, prefix: 65}\n") ==
          "t.yaml:3:30: score_mod: unknown score modifier \"alibii\" (modifiers: none, alibi, "
          "softcap:CAP, rel_bias, head_bias)\n"
          "t.yaml:4:30: score_mod: softcap's cap 0 is out of range [1, 10000]\n"
          "t.yaml:5:45: seq_lens: the documents' lengths sum to 60, seq_len is 64 (mask "
          "document packs them into each sequence, filling it)\n"
          "t.yaml:6:25: mask document needs seq_lens: the lengths of the documents packed into "
          "each sequence\n"
          "t.yaml:7:25: mask prefix needs prefix: N (the first N keys, which every query sees)\n"
          "t.yaml:8:27: prefix applies only to mask prefix\n"
          "t.yaml:9:41: prefix must be at most 64, got 65");
  }

  TEST_CASE("unknown kernels and models with did-you-mean; patterns that match nothing") {
    CHECK(errors("model: llama-2-7b\nworkloads: [{seq_len: 64, kernels: [sdpa.flsh, cuda.*, "
                 "trition.*, 'op:bad']}]\n") ==
          "t.yaml:2:37: unknown kernel \"sdpa.flsh\" (did you mean \"sdpa.flash\"?)\n"
          "t.yaml:2:56: kernel pattern \"trition.*\" matches no kernel\n"
          "t.yaml:2:67: kernel \"op:bad\": a plugin op is op:namespace::name");
    CHECK(errors("model: llama2-7b\nworkloads: [{seq_len: 64}]\n") ==
          "t.yaml:1:8: unknown model \"llama2-7b\" (did you mean \"llama-2-7b\"?)");
    CHECK(errors("model: gpt2\nworkloads: [{seq_len: 64, kernels: [sdpa.*]}]\n", {}) ==
          "t.yaml:2:37: kernel pattern \"sdpa.*\" needs the kernel registry to expand; name the "
          "kernels");
  }

  TEST_CASE("reference: one name for a workload, or a mapping by kernel glob; none kept") {
    auto s = scenario::load_text(
        "model: gpt2\nseq_len: 64\nworkloads:\n"
        "  - kernels: ['aoti:mine.pt2', 'aoti:mine-bug.pt2', eager, sdpa.math]\n"
        "    reference: {'aoti:mine*.pt2': 'aoti:mine-fp32.pt2', eager: none}\n"
        "  - {name: all, seed: 1, kernels: [eager, sdpa.flash], reference: 'op:my::attn'}\n",
        "t.yaml", registry());
    std::vector<std::string> refs;
    for (const auto& c : s.cases) refs.push_back(c.kernel + " -> " + c.reference);
    CHECK(refs == std::vector<std::string>{"aoti:mine.pt2 -> aoti:mine-fp32.pt2",
                                           "aoti:mine-bug.pt2 -> aoti:mine-fp32.pt2",
                                           "eager -> none", "sdpa.math -> ", "eager -> op:my::attn",
                                           "sdpa.flash -> op:my::attn"});
    // sdpa.math is the default, spelled as none is (empty): one case, one way to store it.
    auto d = scenario::load_text("model: gpt2\nworkloads: [{seq_len: 64, reference: sdpa.math}]\n",
                                 "t.yaml", registry());
    CHECK(d.cases.at(0).reference.empty());
  }

  TEST_CASE("reference: unknown names, a kernel its own reference, entries matching nothing") {
    CHECK(errors("model: gpt2\nworkloads:\n  - seq_len: 64\n    kernels: [eager, cpu.flash]\n"
                 "    reference: {eager: sdpa.mth, cpu.flash: cpu.flash, 'aoti:x*': none}\n"
                 "  - {seq_len: 32, reference: [eager]}\n") ==
          "t.yaml:5:24: reference: unknown kernel \"sdpa.mth\" (did you mean \"sdpa.math\"?); a "
          "reference is a kernel, aoti:PATH.pt2, py:PATH.py:NAME, op:ns::name or none\n"
          "t.yaml:5:45: reference: kernel \"cpu.flash\" cannot be its own reference (name another "
          "kernel, or none)\n"
          "t.yaml:5:56: reference: this entry matches no case's kernel\n"
          "t.yaml:6:30: reference: expected a kernel name, or a mapping from kernel to reference, "
          "got a list");
  }

  TEST_CASE("duplicate case keys and duplicate YAML keys") {
    CHECK(errors("model: gpt2\nkernels: [eager]\nworkloads:\n  - {seq_len: 64}\n"
                 "  - {name: again, seq_len: [32, 64]}\n") ==
          "t.yaml:5:5: duplicate case key \"gpt2/prefill/b1-s64-fp32-none/eager\" (also at "
          "t.yaml:4:5)");
    CHECK(errors("model: gpt2\nmodel: bert-base\nworkloads: [{seq_len: 64}]\n") ==
          "t.yaml:2:1: duplicate key \"model\" (first at line 1)");
    try {
      scenario::load({data + "order_a.yaml", data + "order_a.yaml"}, registry());
      FAIL("expected duplicates");
    } catch (const util::InputError& e) {
      CHECK(e.diagnostics().size() == 16);
      CHECK(e.diagnostics()[0].message.starts_with("duplicate case key \"bert-base/prefill/"));
    }
  }

  TEST_CASE("exclude and include entries are checked") {
    CHECK(errors("model: gpt2\nworkloads:\n  - seq_len: [64, 128]\n    exclude:\n"
                 "      - {seq_len: 256}\n      - {seqlen: 64}\n    include:\n"
                 "      - {batch: 0}\n") ==
          "t.yaml:5:9: exclude entry matches no case\n"
          "t.yaml:6:10: unknown key \"seqlen\" in exclude entry (did you mean \"seq_len\"?)\n"
          "t.yaml:8:17: batch must be at least 1, got 0");
  }

  TEST_CASE("aliases that point nowhere or collide") {
    CHECK(errors("model: gpt2\nkernels: [eager]\nworkloads: [{seq_len: [64, 128]}]\naliases:\n"
                 "  gpt2/prefill/b1-s65-fp32-none/eager: old\n"
                 "  \"nothing/*\": \"x/*\"\n"
                 "  gpt2/prefill/b1-s64-fp32-none/eager: gpt2/prefill/b1-s128-fp32-none/eager\n") ==
          "t.yaml:5:3: aliases: no case has the key \"gpt2/prefill/b1-s65-fp32-none/eager\" (did "
          "you mean \"gpt2/prefill/b1-s64-fp32-none/eager\"?)\n"
          "t.yaml:6:3: aliases: no case key starts with \"nothing/\"\n"
          "t.yaml:7:40: alias \"gpt2/prefill/b1-s128-fp32-none/eager\" is the key of a current "
          "case");
  }

  TEST_CASE("files: missing, syntax errors, extends problems, not a mapping") {
    try {
      scenario::load({data + "missing.yaml", data + "order_a.yaml"});
      FAIL("expected an error");
    } catch (const util::InputError& e) {
      CHECK(std::string(e.what()) == data + "missing.yaml: cannot open file");
    }
    CHECK(errors("model: gpt2\nworkloads: [{seq_len: 64}\n") ==
          "t.yaml:3:1: YAML syntax error: end of sequence flow not found");
    CHECK(errors("model: gpt2\n  bad: indent\n") ==
          "t.yaml:2:6: YAML syntax error: illegal map value");
    CHECK(errors("- a\n- b\n") ==
          "t.yaml:1:1: a scenario must be a mapping (name:, model:, workloads:, ...), got a list");
    CHECK(errors("") ==
          "t.yaml:1:1: a scenario must be a mapping (name:, model:, workloads:, ...), got nothing");
    CHECK(errors("model: gpt2\n") == "t.yaml:1:1: no workloads: add a workloads: list");
    CHECK(errors("model: gpt2\nworkloads: []\n") ==
          "t.yaml:2:12: workloads: expected a list of workloads, got an empty list");
    CHECK(errors("extends: nope.yaml\nworkloads: [{seq_len: 64}]\n") ==
          "t.yaml:1:10: extends: nope.yaml: cannot open file\n"
          "t.yaml:2:13: no model: set model: in the workload or at the top level");
    try {
      scenario::load({data + "cycle_a.yaml"});
      FAIL("expected an error");
    } catch (const util::InputError& e) {
      CHECK(std::string(e.what()) ==
            data +
                "cycle_b.yaml:1:10: extends: cycle cycle_a.yaml -> cycle_b.yaml -> cycle_a.yaml");
    }
  }

  TEST_CASE("a matrix too large to be meant is an error") {
    std::string many = "[";
    for (int i = 1; i <= 100; ++i) many += std::to_string(i) + (i < 100 ? "," : "]");
    CHECK(errors("model: gpt2\nkernels: [eager, sdpa.math]\nworkloads: [{batch: " + many +
                 ", seq_len: " + many + ", seed: [1,2,3,4,5,6]}]\n") ==
          "t.yaml:3:13: the workload expands to more than 100000 cases; split it");
  }

  TEST_CASE("alias bombs are bounded") {
    std::string y = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    char prev = 'a';
    for (char c = 'b'; c <= 'i'; ++c, ++prev)
      y += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}]\n",
                       c, prev);
    // Ten to the ninth scalars if expanded: the alias that crosses the limit is named.
    CHECK(errors(y) ==
          "t.yaml:6:8: alias *e expands the document beyond 200000 values (anchor &e at line 5, "
          "111111 values each time it is used); a scenario this large is a mistake");
  }

  TEST_CASE("an alias inside its own anchor is an error at the anchor, not a crash") {
    CHECK(errors("a: &w [*w]\n") ==
          "t.yaml:1:4: anchor &w contains an alias to itself (*w at line 1, column 8): a node "
          "cannot include itself");
    CHECK(errors("m: &m {<<: *m}\n") ==
          "t.yaml:1:4: anchor &m contains an alias to itself (*m at line 1, column 12): a node "
          "cannot include itself");
    CHECK(errors("&m [*m]\n") ==
          "t.yaml:1:1: anchor &m contains an alias to itself (*m at line 1, column 5): a node "
          "cannot include itself");
    CHECK(errors("workloads:\n  - &w\n    seq_len: 64\n    include: [*w]\n") ==
          "t.yaml:2:5: anchor &w contains an alias to itself (*w at line 4, column 15): a node "
          "cannot include itself");
  }

  TEST_CASE("nesting deeper than 64 levels is said as such, where it happens") {
    const std::string deep = "a: " + std::string(70, '[') + std::string(70, ']') + "\n";
    CHECK(errors(deep) == "t.yaml:1:67: nested deeper than 64 levels; a scenario needs far fewer");
    // Far beyond yaml-cpp's own recursion limit (which it reports as "bad file"). An unclosed
    // "[" may still turn out to be a mapping's key, so yaml-cpp opens two levels for each.
    CHECK(errors(std::string(5000, '[')) ==
          "t.yaml:1:33: nested deeper than 64 levels; a scenario needs far fewer");
    // Aliases nest too: each anchor below holds the one before it.
    std::string y = "a0: &a0 [x]\n";
    for (int i = 1; i < 70; ++i) y += fmt::format("a{0}: &a{0} [*a{1}]\n", i, i - 1);
    CHECK(errors(y) ==
          "t.yaml:63:12: alias *a61 nests the document deeper than 64 levels (anchor &a61 at line "
          "62)");
  }

  TEST_CASE("a huge list is an error at its key") {
    std::string lens;
    for (int i = 0; i < 1000000; ++i) lens += i ? ",1" : "1";
    CHECK(errors("model: gpt2\nworkloads:\n  - seq_len: 64\n    seq_lens: [" + lens + "]\n") ==
          "t.yaml:4:5: seq_lens: more than 200000 values in the document; a scenario this large "
          "is a mistake");
  }

  TEST_CASE("merge keys add the entries a mapping does not set; the mapping's own win") {
    auto s = scenario::load_text(
        "workloads:\n"
        "  - &base {model: gpt2, kernels: [eager], seq_len: 64, dtype: fp16}\n"
        "  - <<: *base\n"
        "    seq_len: 32\n"
        "  - {<<: [{dtype: bf16}, *base], name: both, seq_len: 16}\n",
        "t.yaml", registry());
    CHECK(keys(s) == std::vector<std::string>{"gpt2/prefill/b1-s64-fp16-none/eager",
                                              "gpt2/prefill/b1-s32-fp16-none/eager",
                                              "gpt2/prefill/b1-s16-bf16-none/eager"});
    CHECK(errors("model: gpt2\nworkloads:\n  - {<<: 3, seq_len: 64}\n") ==
          "t.yaml:3:10: <<: expected a mapping or a list of mappings to merge, got a scalar");
    // A quoted "<<" is an ordinary key.
    CHECK(errors("model: gpt2\nworkloads:\n  - {\"<<\": {dtype: fp16}, seq_len: 64}\n") ==
          "t.yaml:3:6: unknown key \"<<\" in workload");
  }

  TEST_CASE("a value with a newline stays on the error's line") {
    try {
      scenario::load_text("model: gpt2\nworkloads:\n  - seq_len: \"a\\nb\"\n", "t.yaml");
      FAIL("expected an error");
    } catch (const util::InputError& e) {
      CHECK(e.diagnostics()[0].message == "seq_len: expected an integer, got \"a\nb\"");
      CHECK(std::string(e.what()) == "t.yaml:3:14: seq_len: expected an integer, got \"a\\nb\"");
    }
  }

  TEST_CASE("a file far larger than any scenario is refused before it is parsed") {
    char path[] = "/tmp/attnprof-big-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, (16 << 20) + 1) == 0);
    close(fd);
    try {
      scenario::load({path});
      FAIL("expected an error");
    } catch (const util::InputError& e) {
      CHECK(std::string(e.what()) == std::string(path) + ": larger than 16 MiB: not a scenario");
    }
    std::remove(path);
  }

  TEST_CASE("custom mask files: shape against each case, finite values, named at file:line:col") {
    testing::TempDir dir;
    auto write = [&](const std::string& name, const std::string& text) {
      std::ofstream(dir.file(name)) << text;
    };
    write("ok.mask", "0 -inf\n+0.5 0\n");
    write("nan.mask", "0 nan\n0 0\n");
    write("inf.mask", "0 inf\n0 1e99\n");
    write("ragged.mask", "0 0\n\n0 0 0\n");
    write("empty.mask", "\n \n");
    auto errs = [&](const std::string& mask, const std::string& lens) {
      try {
        scenario::load_text("model: gpt2\nworkloads:\n  - seq_len: " + lens +
                                "\n    mask: custom\n    mask_file: " + mask + "\n",
                            dir.file("t.yaml"));
        return std::string();
      } catch (const util::InputError& e) {
        return std::string(e.what());
      }
    };
    CHECK(errs("ok.mask", "2") == "");
    CHECK(errs("ok.mask", "[2, 4, 8]") ==
          dir.file("t.yaml") +
              ":5:16: mask_file ok.mask has 2 rows of 2 values; this case needs q_len x kv_len = "
              "4 x 4\n" +
              dir.file("t.yaml") +
              ":5:16: mask_file ok.mask has 2 rows of 2 values; this case needs q_len x kv_len = "
              "8 x 8");
    CHECK(errs("nan.mask", "2") ==
          dir.file("nan.mask") + ":1:3: \"nan\" is not a finite number or -inf");
    CHECK(errs("inf.mask", "2") ==
          dir.file("inf.mask") + ":1:3: \"inf\" is not a finite number or -inf\n" +
              dir.file("inf.mask") + ":2:3: \"1e99\" is not a finite number or -inf");
    CHECK(errs("ragged.mask", "2") ==
          dir.file("ragged.mask") +
              ":3: 3 values in this row, 2 in the first (line 1); every row needs one value per "
              "key");
    CHECK(errs("empty.mask", "2") ==
          dir.file("empty.mask") + ": the mask file is empty: write q_len rows of kv_len values");
  }

  TEST_CASE("exclude: 20,000 values and 19,999 entries, with work linear in the matrix") {
    // The count of (case, entry) tests at two sizes: linear work grows 8x from n to 8n, a
    // quadratic scan 64x. Wall time would say the same only on a quiet machine.
    auto load = [](int n) {
      std::string batch, exclude;
      for (int i = 1; i <= n; ++i) batch += fmt::format("{}{}", i > 1 ? ", " : "", i);
      for (int i = 2; i <= n; ++i) exclude += fmt::format("      - {{batch: {}}}\n", i);
      return scenario::load_text(
          "model: gpt2\nkernels: [eager]\nworkloads:\n  - seq_len: 8\n"
          "    batch: [" +
              batch + "]\n    exclude:\n" + exclude,
          "t.yaml", registry());
    };
    const auto small = load(2500), large = load(20000);
    REQUIRE(large.cases.size() == 1);
    CHECK(large.cases[0].key == "gpt2/prefill/b1-s8-fp32-none/eager");
    CHECK(small.exclude_checks > 0);
    CHECK(large.exclude_checks <= 8 * small.exclude_checks + 8);
  }

  TEST_CASE(
      "exclude: values compare as numbers, kernels as globs; an entry shadowed by another "
      "still counts as used") {
    auto s = scenario::load_text(
        "model: gpt2\nkernels: [eager, sdpa.math, sdpa.flash]\nworkloads:\n"
        "  - seq_len: [64, 0128]\n    batch: [1, 2]\n    exclude:\n"
        "      - {seq_len: 128.0, kernels: \"sdpa.*\"}\n"
        "      - {seq_len: 128, kernels: sdpa.math}\n"
        "      - {batch: [2], seq_len: [64], kernels: [eager, sdpa.flash]}\n",
        "t.yaml", registry());
    CHECK(keys(s) == std::vector<std::string>{
                         "gpt2/prefill/b1-s64-fp32-none/eager",
                         "gpt2/prefill/b1-s64-fp32-none/sdpa.math",
                         "gpt2/prefill/b1-s64-fp32-none/sdpa.flash",
                         "gpt2/prefill/b1-s128-fp32-none/eager",
                         "gpt2/prefill/b2-s64-fp32-none/sdpa.math",
                         "gpt2/prefill/b2-s128-fp32-none/eager",
                     });
  }

  TEST_CASE("a file that is not UTF-8 text: one short line naming its encoding or the byte") {
    // UTF-16 with and without a byte-order mark, as Windows editors save it: named, not quoted.
    std::string le = "\xFF\xFE";
    for (char ch : std::string("model: bert-base\n")) le += std::string{ch, '\0'};
    CHECK(errors(le) ==
          "t.yaml: the file is UTF-16 (little-endian); scenario files are UTF-8 (convert it: "
          "iconv -f UTF-16 -t UTF-8)");
    CHECK(errors(le.substr(2)) == errors(le));
    std::string be;
    for (char ch : std::string("model: bert-base\n")) be += std::string{'\0', ch};
    CHECK(errors(be) ==
          "t.yaml: the file is UTF-16 (big-endian); scenario files are UTF-8 (convert it: iconv "
          "-f UTF-16 -t UTF-8)");
    // A name with a byte that is not UTF-8 (Latin-1 here), at its line and column: every
    // command loads through here, so validate, list, list --json and run refuse it alike.
    CHECK(errors("model: bert-base\nworkloads:\n  - {name: caf\xE9, seq_len: 8, kernels: "
                 "[eager]}\n") ==
          "t.yaml:3:15: byte 0xE9 is not UTF-8; scenario files are UTF-8 text");
    CHECK(errors("name: a\xC0\x80\n") ==
          "t.yaml:1:8: byte 0xC0 is not UTF-8; scenario files are UTF-8 text");  // overlong
    CHECK(errors(std::string("name: a\0b\n", 10)) ==
          "t.yaml:1:8: a NUL byte: not a text file; scenario files are UTF-8");
    CHECK(errors("model: bert-base\nworkloads:\n  - {name: caf\xC3\xA9, seq_len: 8, kernels: "
                 "[eager]}\n") == "");  // UTF-8 is fine
  }

  TEST_CASE("a mask file larger than its case's shape is not read; a long token is not quoted") {
    testing::TempDir dir;
    // 2 x 2 values take at most 4 x 32 + 4 + 4096 bytes written out; this one is 64 KiB.
    std::ofstream(dir.file("big.mask")) << std::string(64 * 1024, '0');
    std::ofstream(dir.file("long.mask")) << "0 " << std::string(200, '7') << "x\n0 0\n";
    auto errs = [&](const std::string& mask) {
      try {
        scenario::load_text(
            "model: gpt2\nworkloads:\n  - seq_len: 2\n    mask: custom\n    "
            "mask_file: " +
                mask + "\n",
            dir.file("t.yaml"));
        return std::string();
      } catch (const util::InputError& e) {
        return std::string(e.what());
      }
    };
    CHECK(errs("big.mask") == dir.file("t.yaml") +
                                  ":5:16: mask_file big.mask is 64.00 KiB (65536 bytes), more than "
                                  "2 x 2 values take (4.13 KiB at most); this case needs q_len x "
                                  "kv_len = 2 x 2");
    CHECK(errs("long.mask") == dir.file("long.mask") +
                                   ":1:3: \"7777777777777777...\" (201 characters) is not a "
                                   "finite number or -inf");
  }
}
