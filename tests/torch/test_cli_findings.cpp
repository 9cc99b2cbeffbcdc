// The findings beside the time verdicts, end to end with the test plugin's attention_variant,
// whose environment picks the SDPA backend it calls, plants an error, or allocates another size
// every call: compare and ab report "kernels changed" and "accuracy changed" in the console and
// the JSON report, and fail the gate when asked; a run stores each case's kernels, errors and
// memory figures, which `show --case` prints under the cost matrix.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/torch/cli_helpers.h"

using namespace clitest;

namespace {

const std::string plugin = ATTNPROF_TEST_PLUGIN;
const std::string kKey = "tiny/prefill/b4-s32-fp32-none/op:attnprof_test::attention_variant";

void write_suite(const TempDir& d) {
  d.write("s.yaml", R"(name: s
models:
  tiny: {heads: 2, kv_heads: 2, head_dim: 16, hidden: 32, max_positions: 512}
model: tiny
hardware: {device: cpu, threads: 1}
measure: {warmup: 5ms, min_samples: 20, max_samples: 40, max_noise: 50%, time_budget: 500ms}
gate: {tolerance: 10%}
workloads:
  - {name: w, batch: 4, seq_len: 32, kernels: ["op:attnprof_test::attention_variant"]}
)");
}

// attnprof run of the suite with the plugin, its worker's environment `env` ("NAME=VALUE ...").
Result run_with(const TempDir& d, const std::string& env) {
  return shell_in(
      d.path,
      env + " '" ATTNPROF_BINARY_DIR "/attnprof' run s.yaml --db f.db --plugin '" + plugin + "'");
}

// A baseline from a run with `base_env`, then a run with `head_env` to judge against it.
void base_and_head(const TempDir& d, const std::string& base_env, const std::string& head_env) {
  write_suite(d);
  REQUIRE(run_with(d, base_env).rc == 0);
  Result b = attnprof(d.path, "baseline update --db f.db -o b.yaml --include-unstable");
  INFO(b.out);
  REQUIRE(b.rc == 0);
  REQUIRE(run_with(d, head_env).rc == 0);
}

// The time verdict does not matter here: a wide tolerance keeps it from failing the gate.
Result compare(const TempDir& d, const std::string& more = "") {
  return attnprof(
      d.path, "compare --db f.db --baseline b.yaml --tolerance 1000% --wide --json v.json " + more);
}

}  // namespace

TEST_SUITE("cli.findings") {
  TEST_CASE("compare: a head on another backend is 'kernels changed', a warning unless asked") {
    TempDir d;
    base_and_head(d, "ATTNPROF_TEST_BACKEND=flash", "ATTNPROF_TEST_BACKEND=math");
    Result warn = compare(d);
    INFO(warn.out);
    CHECK(warn.rc == 0);
    // Where the two part first: the backend's op on each side, then the ops under them.
    CHECK(warn.out.find(kKey + ": kernels changed: aten::_scaled_dot_product_flash_attention_for_"
                               "cpu, ") != std::string::npos);
    CHECK(warn.out.find(" -> aten::_scaled_dot_product_attention_math, ") != std::string::npos);
    CHECK(warn.out.find("findings: 1 kernels changed, 0 accuracy changed") != std::string::npos);
    const auto j = nlohmann::json::parse(d.read("v.json"));
    CHECK(j["verdicts"][0]["kernels"]["changed"] == true);
    CHECK(j["verdicts"][0]["kernels"]["removed"][0] ==
          "aten::_scaled_dot_product_flash_attention_for_cpu");
    CHECK(j["verdicts"][0]["accuracy"]["changed"] == false);  // the same result either way
    Result fail = compare(d, "--fail-on-kernel-change");
    INFO(fail.out);
    CHECK(fail.rc == 1);
    CHECK(fail.out.find("(fails the gate: --fail-on-kernel-change)") != std::string::npos);
    // The same backend again: nothing changed.
    REQUIRE(run_with(d, "ATTNPROF_TEST_BACKEND=flash").rc == 0);
    Result same = compare(d, "--fail-on-kernel-change");
    CHECK(same.rc == 0);
    CHECK(same.out.find("kernels changed") == std::string::npos);
  }

  TEST_CASE("compare: a planted error within the tolerance is 'accuracy changed'") {
    TempDir d;
    // The same ops on both sides (adding 0 is still an add): only the error differs.
    base_and_head(d, "ATTNPROF_TEST_BACKEND=flash ATTNPROF_TEST_ERROR=0",
                  "ATTNPROF_TEST_BACKEND=flash ATTNPROF_TEST_ERROR=2e-5");
    Result warn = compare(d);
    INFO(warn.out);
    CHECK(warn.rc == 0);
    CHECK(warn.out.find(kKey + ": accuracy changed: max abs error ") != std::string::npos);
    CHECK(warn.out.find("more than 4x the baseline's (errors below fp32's epsilon 1.19e-07 count "
                        "as it), still within the check's tolerance") != std::string::npos);
    const auto j = nlohmann::json::parse(d.read("v.json"));
    CHECK(j["verdicts"][0]["accuracy"]["head_max_abs_error"].get<double>() ==
          doctest::Approx(2e-5).epsilon(0.05));
    CHECK(compare(d, "--fail-on-accuracy").rc == 1);
    CHECK(compare(d, "--fail-on-accuracy --accuracy-factor 1000").rc == 0);
    Result bad = compare(d, "--accuracy-factor 0.5");
    CHECK(bad.rc == 2);
    CHECK(bad.out.find("--accuracy-factor: must be a number above 1, got 0.5") !=
          std::string::npos);
    // Stored with the run: history reads both errors.
    Result h = attnprof(d.path, "history --db f.db --metric 'accuracy.*' --format csv");
    CHECK(h.out.find(",accuracy.max_abs_error,") != std::string::npos);
    CHECK(h.out.find(",accuracy.mean_abs_error,") != std::string::npos);
  }

  TEST_CASE("show: what a case ran, its errors and its memory under its cost matrix") {
    TempDir d;
    write_suite(d);
    REQUIRE(run_with(d, "ATTNPROF_TEST_BACKEND=flash ATTNPROF_TEST_ALLOC=1").rc == 0);
    Result s = attnprof(d.path, "show --db f.db --case '*' --rows 1");
    INFO(s.out);
    CHECK(s.out.find("\nkernels   ") != std::string::npos);
    CHECK(s.out.find("aten::_scaled_dot_product_flash_attention_for_cpu") != std::string::npos);
    CHECK(s.out.find("\naccuracy  max abs error ") != std::string::npos);
    CHECK(s.out.find(" against sdpa.math\n") != std::string::npos);
    CHECK(s.out.find("\nmemory    over ") != std::string::npos);
    // 33 to 48 MiB of fresh pages every call: thousands of minor faults per call.
    Result f =
        attnprof(d.path, "history --db f.db --metric memory.minor_faults_per_call --format csv");
    INFO(f.out);
    const auto at = f.out.rfind(',');
    REQUIRE(at != std::string::npos);
    CHECK(std::stod(f.out.substr(at + 1)) > 1000);
  }

  TEST_CASE("ab: the findings and the memory figures that moved, base beside head") {
    TempDir d;
    write_suite(d);
    Result r = attnprof(
        d.path,
        "ab s.yaml --db ab.db --no-confirm --max-rounds 5 --batch-ms 2 --wide --json v.json "
        "--base-arg=--plugin='" +
            plugin + "' --head-arg=--plugin='" + plugin +
            "' --base-arg=--env=ATTNPROF_TEST_BACKEND=flash "
            "--head-arg=--env=ATTNPROF_TEST_BACKEND=math "
            "--head-arg=--env=ATTNPROF_TEST_ALLOC=1 --fail-on-kernel-change");
    INFO(r.out);
    CHECK(r.rc == 1);
    CHECK(r.out.find(": kernels changed: aten::_scaled_dot_product_flash_attention_for_cpu, ") !=
          std::string::npos);
    CHECK(r.out.find(" -> aten::_scaled_dot_product_attention_math, ") != std::string::npos);
    CHECK(r.out.find("memory figures that moved between the sides") != std::string::npos);
    CHECK(r.out.find("memory.minor_faults_per_call") != std::string::npos);
    const auto j = nlohmann::json::parse(d.read("v.json"));
    bool moved = false;
    for (const auto& m : j["ab"]["cases"][0]["memory"])
      moved = moved || (m["metric"] == "memory.minor_faults_per_call" && m["moved"] == true &&
                        m["head"].get<double>() > 1000);
    CHECK(moved);
  }
}
