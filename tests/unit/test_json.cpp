// core::json: records round-trip field by field; wrong types and enum values name the
// field.
#include <doctest/doctest.h>

#include "harness/core/json.h"
#include "harness/util/error.h"

using namespace attnprof;

TEST_SUITE("core::json") {
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
    c.measure.trace_calls = 25;  // the worker reads it from this JSON
    c.gate.tolerance = 0.03;
    c.loc = {"s.yaml", 12, 5};
    c.mask_file = "/data/alibi.mask";
    core::Case d = core::case_from_json(core::to_json(c));
    CHECK(core::to_json(d) == core::to_json(c));
    CHECK(d.phase == core::Phase::decode);
    CHECK(d.level == core::Level::layer);
    CHECK(d.seed == 1ull << 60);
    CHECK(d.hardware.peak_gbps == 4800);
    CHECK_FALSE(d.hardware.peak_tflops);
    CHECK(d.loc.line == 12);
    CHECK(d.measure.trace_calls == 25);
    CHECK(d.mask_file == "/data/alibi.mask");  // the worker loads the mask from it
  }

  TEST_CASE("a cost row keeps kernel launches and copies apart") {
    core::CostRow r;
    r.op = "aten::copy_";
    r.launches = 1;
    r.copies = 2;
    const auto j = core::to_json(r);
    CHECK(j.at("launches") == 1);
    CHECK(j.at("copies") == 2);
    const core::CostRow back = core::cost_row_from_json(j);
    CHECK(back.launches == 1);
    CHECK(back.copies == 2);
    // Exports written before copies had their own field read as none.
    auto old = j;
    old.erase("copies");
    CHECK(core::cost_row_from_json(old).copies == 0);
  }

  TEST_CASE("samples keep their descheduling record; results without it read as before") {
    core::CaseResult cr;
    cr.spec.key = "m/k";
    cr.spec.measure.max_descheduled = 0.25;
    cr.samples = {{1000, 1, std::nullopt, false, 900, 2, 150},
                  {1100, 2, std::nullopt, false, 1100, 0, std::nullopt}};
    const nlohmann::json j = core::to_json(cr);
    CHECK(j["samples"]["cpu_ns"] == nlohmann::json({900, 1100}));
    CHECK(j["samples"]["invol_switches"] == nlohmann::json({2, 0}));
    CHECK(j["samples"]["wait_ns"] == nlohmann::json({150, nullptr}));
    const core::CaseResult back = core::case_result_from_json(j);
    CHECK(back.samples.at(0).cpu_ns == 900);
    CHECK(back.samples.at(0).invol_switches == 2);
    CHECK(back.samples.at(0).wait_ns == 150);
    CHECK_FALSE(back.samples.at(1).wait_ns.has_value());
    CHECK(back.spec.measure.max_descheduled == 0.25);
    // Written without the record (a GPU timer, an older attnprof): no arrays, none read.
    cr.samples = {{1000, 1, std::nullopt, false}};
    const nlohmann::json old = core::to_json(cr);
    CHECK_FALSE(old["samples"].contains("cpu_ns"));
    CHECK_FALSE(old["samples"].contains("wait_ns"));
    CHECK_FALSE(core::case_result_from_json(old).samples.at(0).cpu_ns.has_value());
  }

  TEST_CASE("what a case ran travels as a list; absent is unknown, an empty list is none") {
    core::CaseResult cr;
    cr.spec.key = "m/k";
    CHECK_FALSE(core::to_json(cr).contains("kernels"));
    CHECK_FALSE(core::case_result_from_json(core::to_json(cr)).kernels.has_value());
    cr.kernels = std::vector<std::string>{"aten::bmm", "aten::softmax"};
    const nlohmann::json j = core::to_json(cr);
    CHECK(j["kernels"] == nlohmann::json({"aten::bmm", "aten::softmax"}));
    CHECK(core::case_result_from_json(j).kernels == cr.kernels);
    cr.kernels = std::vector<std::string>{};
    CHECK(core::case_result_from_json(core::to_json(cr)).kernels == std::vector<std::string>{});
    nlohmann::json bad = j;
    bad["kernels"] = {"aten::bmm", 3};
    try {
      core::case_result_from_json(bad);
      FAIL("a name that is not a string was read");
    } catch (const core::FieldError& e) {
      CHECK(e.field() == "kernels[1]");
    }
  }

  TEST_CASE("a field of the wrong type is an input error naming the field's path") {
    auto err = [](const nlohmann::json& j) {
      try {
        core::run_from_json(j);
        return std::string("no error");
      } catch (const core::FieldError& e) {
        return e.field() + ": " + e.problem();
      }
    };
    CHECK(err({{"started_ns", "12"}}) == "started_ns: expected an integer, got string \"12\"");
    CHECK(err({{"started_ns", 1.5}}) == "started_ns: expected an integer, got number 1.5");
    CHECK(err({{"cases", {{{"spec", {{"batch", "x"}}}}}}}) ==
          "cases[0].spec.batch: expected an integer, got string \"x\"");
    CHECK(err({{"cases", {{{"spec", {{"seed", -1}}}}}}}) ==
          "cases[0].spec.seed: expected a non-negative integer, got number -1");
    CHECK(err({{"cases", {{{"spec", {{"batch", 1ull << 40}}}}}}}) ==
          "cases[0].spec.batch: expected an integer in range, got number 1099511627776");
    CHECK(err({{"cases",
                {{{"spec", nlohmann::json::object()},
                  {"samples", {{"ns", {1, 2}}, {"at_ns", {1}}}}}}}}) ==
          "cases[0].samples.at_ns: 1 values, but ns has 2: the sample arrays must be equally "
          "long");
    CHECK(err({{"cases",
                {{{"spec", nlohmann::json::object()},
                  {"cost",
                   {{{"kernels",
                      nlohmann::json::array({nlohmann::json::array({"k", "many"})})}}}}}}}}) ==
          "cases[0].cost[0].kernels[0]: expected an integer, got string \"many\"");
    CHECK(err({{"env", {{"cpu", 3}}}}) == "env.cpu: expected a string, got number 3");
    CHECK(err({{"cases", {{{"spec", 7}}}}}) == "cases[0].spec: expected an object, got number 7");
  }

  TEST_CASE("an unknown enum value is an input error naming the field") {
    try {
      core::case_from_json({{"dtype", "fp8"}});
      FAIL("no error");
    } catch (const util::InputError& e) {
      CHECK(std::string(e.what()) == "run JSON: dtype: unknown value \"fp8\"");
    }
  }
}
