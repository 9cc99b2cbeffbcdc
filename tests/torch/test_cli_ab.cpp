// attnprof ab when both sides are the same build (an A/A): its first line and every report say
// so, and the JSON report's ab.same_build is true; two plugin files or two thread counts are
// not an A/A. The exit code is the gate's either way: with one pair of workers (--no-confirm),
// an inconclusive case, which passes.
#include <doctest/doctest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/torch/cli_helpers.h"

using namespace clitest;

namespace {

const std::string plugin = ATTNPROF_TEST_PLUGIN;
const std::string build = ATTNPROF_BINARY_DIR;

const char* kAaLine =
    "A/A: both sides are the same build (one worker executable, the same arguments and plugins): "
    "the verdicts measure the noise of this machine, not a change";

// One small CPU case, and as few rounds as a verdict needs: what is checked here is what the
// command says about its sides, not the verdict.
void write_suite(const TempDir& d) {
  d.write("s.yaml", R"(name: s
models:
  tiny: {heads: 2, kv_heads: 2, head_dim: 16, hidden: 32, max_positions: 512}
model: tiny
hardware: {device: cpu, threads: 1}
measure: {warmup: 2ms, min_samples: 10, max_samples: 20, max_noise: 50%, time_budget: 300ms}
gate: {tolerance: 50%}
workloads:
  - {name: w, batch: 1, seq_len: 16, kernels: [cpu.naive]}
)");
}

Result ab(const TempDir& d, const std::string& sides) {
  return attnprof(d.path,
                  "ab s.yaml --db ab.db --no-trace --no-confirm --max-rounds 8 "
                  "--batch-ms 1 --markdown m.md --json v.json --junit j.xml --html r.html " +
                      sides);
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

}  // namespace

TEST_SUITE("cli.ab") {
  TEST_CASE("ab: an A/A says so on its first line and in every report; the gate decides as ever") {
    TempDir d;
    write_suite(d);
    Result r = ab(d, "--base '" + build + "'");  // the head: the worker beside attnprof
    INFO(r.out);
    CHECK(first_line(r.out) == kAaLine);
    CHECK(r.out.find(kAaLine, 1) != std::string::npos);  // and in the console report
    CHECK(d.read("m.md").find(std::string("> ") + kAaLine) != std::string::npos);
    CHECK(d.read("j.xml").find(std::string("<property name=\"note\" value=\"") + kAaLine) !=
          std::string::npos);
    CHECK(d.read("r.html").find(std::string("<p class=\"note\">") + kAaLine) != std::string::npos);
    const auto j = nlohmann::json::parse(d.read("v.json"));
    CHECK(j["ab"]["same_build"] == true);
    CHECK((!j["notes"].empty() && j["notes"][0] == kAaLine));  // first of the notes
    CHECK(j["result"]["exit_code"] == r.rc);
    // --no-confirm: one pair of workers, on which no verdict rests, so the case is inconclusive
    // whatever the machine's load did to its rounds, and the gate (not --strict) passes.
    REQUIRE(j["verdicts"].size() == 1);
    CHECK(j["verdicts"][0]["verdict"] == "inconclusive");
    CHECK(r.rc == 0);

    // The same files named otherwise: the worker and its folder, a symlink, ./plugin.
    CHECK(symlink(build.c_str(), (d.path / "build-link").c_str()) == 0);
    CHECK(symlink(plugin.c_str(), (d.path / "p.so").c_str()) == 0);
    Result same =
        ab(d, "--base '" + build + "/attnprof-worker' --head build-link --base-arg=--plugin='" +
                  plugin + "' --head-arg=--plugin=./p.so");
    INFO(same.out);
    CHECK(first_line(same.out) == kAaLine);
    CHECK(nlohmann::json::parse(d.read("v.json"))["ab"]["same_build"] == true);
  }

  TEST_CASE("ab: two plugin files, or two thread counts, are two builds: no A/A anywhere") {
    TempDir d;
    write_suite(d);
    REQUIRE(shell_in(d.path, "cp '" + plugin + "' copy.so").rc == 0);
    for (const std::string sides :
         {"--base-arg=--plugin='" + plugin + "' --head-arg=--plugin=copy.so",
          std::string("--base-arg=--threads=1 --head-arg=--threads=2")}) {
      Result r = ab(d, "--base '" + build + "' " + sides);
      INFO(sides, "\n", r.out);
      CHECK(first_line(r.out).starts_with("attnprof ab: 1 case(s); base "));
      CHECK(r.out.find("A/A") == std::string::npos);
      for (const char* report : {"m.md", "j.xml", "r.html", "v.json"})
        CHECK(d.read(report).find("A/A") == std::string::npos);
      const auto j = nlohmann::json::parse(d.read("v.json"));
      CHECK(j["ab"]["same_build"] == false);
      CHECK(j["result"]["exit_code"] == r.rc);
    }
  }
}
