// gate::baseline: baseline files parsed, checked with exact messages, made from runs, and
// written back as the exact text that reads back the same.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "harness/gate/baseline.h"
#include "harness/util/error.h"

using namespace attnprof;

namespace {
std::string error_of(const std::string& text) {
  try {
    gate::parse_baseline(text, "baselines/cpu.yaml");
  } catch (const util::InputError& e) {
    return e.what();
  }
  return "no error";
}

core::CaseResult result(const std::string& key, std::vector<std::int64_t> ns) {
  core::CaseResult cr;
  cr.spec.key = key;
  for (auto v : ns) {
    core::Sample s;
    s.ns = v;
    cr.samples.push_back(s);
  }
  return cr;
}
}  // namespace

TEST_SUITE("gate::baseline") {
  TEST_CASE("parses a baseline and sorts its samples") {
    auto b = gate::parse_baseline(R"(hardware: cpu-ci
fingerprint: abc
cases:
  "m/prefill/b1/sdpa.math":
    median_ns: 100
    q1_ns: 90
    q3_ns: 110
    samples_ns: [120, 90, 100]
  other:
    median_ns: 5
    n: 40
)",
                                  "b.yaml");
    CHECK(b.hardware == "cpu-ci");
    CHECK(b.fingerprint == "abc");
    REQUIRE(b.cases.size() == 2);
    const auto& c = b.cases.at("m/prefill/b1/sdpa.math");
    CHECK(c.median_ns == 100);
    CHECK(c.samples_ns == std::vector<double>{90, 100, 120});
    CHECK(c.n == 3);  // from the samples when not given
    CHECK(c.line == 5);
    CHECK(b.cases.at("other").n == 40);
  }
  TEST_CASE("finds a case by key, then by its aliases") {
    gate::Baseline b;
    b.cases["old/name"].median_ns = 1;
    core::Case c;
    c.key = "new/name";
    CHECK(b.find(c) == nullptr);
    c.aliases = {"older/name", "old/name"};
    std::string matched;
    CHECK(b.find(c, &matched) == &b.cases["old/name"]);
    CHECK(matched == "old/name");
  }
  TEST_CASE("bad input names file, line and column, every problem at once") {
    CHECK(error_of("hardware: x\ncases:\n  a:\n    median_ns: -3\n    mean_ns: 4\n") ==
          "baselines/cpu.yaml:4:16: median_ns must be a positive number, got \"-3\"\n"
          "baselines/cpu.yaml:5:5: unknown key \"mean_ns\" in case \"a\"");
    CHECK(error_of("hardware: x\ncases:\n  a:\n    q1_ns: 3\n") ==
          "baselines/cpu.yaml:4:5: case \"a\" has no median_ns");
    CHECK(error_of("hardware: x\ncases:\n  a: {median_ns: 10, samples_ns: [1, x, 3]}\n") ==
          "baselines/cpu.yaml:3:38: a sample must be a positive number, got \"x\"");
    CHECK(error_of("cases: {}\nhardwre: x\n") ==
          "baselines/cpu.yaml:2:1: unknown key \"hardwre\" (expected hardware, fingerprint, "
          "commit, cases)\nbaselines/cpu.yaml:1:1: missing \"hardware\"");
    CHECK(error_of("hardware: x\ncases:\n  a: {median_ns: 10\n") ==
          "baselines/cpu.yaml:4:1: end of map flow not found");
    CHECK(error_of("hardware: x\ncases:\n  a: {median_ns: 10}\n  a: {median_ns: 11}\n") ==
          "baselines/cpu.yaml:4:3: duplicate case \"a\" (first on line 3)");
    CHECK(error_of("hardware: x\ncases:\n  a: {median_ns: 10, q1_ns: 12}\n") ==
          "baselines/cpu.yaml:3:6: case \"a\": q1_ns <= median_ns <= q3_ns does not hold");
  }
  TEST_CASE("what a case ran and its errors: written, read back as a set, bad ones named") {
    core::Run run;
    run.env.fields = {{"device.name", "cpu-test"}};
    run.cases.push_back(result("m/k", {100, 101}));
    run.cases[0].backend = "flash";
    run.cases[0].reference = "sdpa.math";
    run.cases[0].max_abs_error = 4.172325134277344e-07;
    run.cases[0].metrics["accuracy.mean_abs_error"] = 3.1e-08;
    run.cases[0].kernels = std::vector<std::string>{"aten::empty", "void at::k<float, 2>(x, y)"};
    const std::string yaml = gate::to_yaml(gate::make_baseline(run));
    CHECK(yaml.find("    timing: \"cpu.wall\"\n"
                    "    backend: \"flash\"\n"
                    "    reference: \"sdpa.math\"\n"
                    "    max_abs_error: 4.17233e-07\n"
                    "    mean_abs_error: 3.1e-08\n"
                    "    kernels:\n"
                    "      - \"aten::empty\"\n"
                    "      - \"void at::k<float, 2>(x, y)\"\n") != std::string::npos);
    const gate::Traits back = gate::parse_baseline(yaml, "b.yaml").cases.at("m/k").traits;
    CHECK(back.backend == "flash");
    CHECK(back.reference == "sdpa.math");
    CHECK(back.max_abs_error == doctest::Approx(4.17233e-07));
    CHECK(back.mean_abs_error == doctest::Approx(3.1e-08));
    CHECK(back.kernels == run.cases[0].kernels);
    // A file written before any of it: unknown, which no comparison calls changed.
    const gate::Traits none =
        gate::parse_baseline("hardware: x\ncases:\n  a: {median_ns: 10}\n", "b.yaml")
            .cases.at("a")
            .traits;
    CHECK_FALSE(none.kernels.has_value());
    CHECK_FALSE(none.max_abs_error.has_value());
    // Written by hand: each name once, in the order written.
    CHECK(gate::parse_baseline("hardware: x\ncases:\n  a: {median_ns: 10, kernels: [b, a, b]}\n",
                               "b.yaml")
              .cases.at("a")
              .traits.kernels == std::vector<std::string>{"b", "a"});
    CHECK(error_of("hardware: x\ncases:\n  a: {median_ns: 10, kernels: aten::bmm}\n") ==
          "baselines/cpu.yaml:3:31: kernels must be a list of names");
    CHECK(error_of("hardware: x\ncases:\n  a: {median_ns: 10, max_abs_error: -1}\n") ==
          "baselines/cpu.yaml:3:37: max_abs_error must be a non-negative number, got \"-1\"");
  }

  TEST_CASE("a missing file is bad input that names the file") {
    try {
      gate::load_baseline("/nonexistent/cpu.yaml");
      FAIL("no error");
    } catch (const util::InputError& e) {
      CHECK(std::string(e.what()) ==
            "/nonexistent/cpu.yaml: cannot read: No such file or directory");
    }
  }
  TEST_CASE("written from a run: exact text, then read back the same") {
    core::Run run;
    run.git_commit = "1f2e3d4";
    run.env.fields = {{"device.name", "cpu-test"}};
    run.cases.push_back(result("m/k", {103, 101, 100, 102, 104}));
    run.cases.back().samples[4].dropped = true;  // a dropped sample stays out of the baseline
    run.cases.push_back(result("failed/k", {1, 2}));
    run.cases.back().status = core::CaseStatus::failed;
    gate::Baseline b = gate::make_baseline(run);
    CHECK(gate::to_yaml(b) ==
          "# attnprof baseline: per-case timings that `attnprof compare` gates against.\n"
          "# Written by `attnprof baseline update`; samples_ns are ascending, in nanoseconds.\n"
          "hardware: \"cpu-test\"\n"
          "fingerprint: \"" +
              run.env.fingerprint() +
              "\"\n"
              "commit: \"1f2e3d4\"\n"
              "cases:\n"
              "  \"m/k\":\n"
              "    median_ns: 102\n"  // 101.5 rounds away from zero
              "    q1_ns: 101\n"
              "    q3_ns: 102\n"
              "    ci_low_ns: 100\n"
              "    ci_high_ns: 103\n"
              "    n: 4\n"
              "    timing: \"cpu.wall\"\n"
              "    samples_ns: [100, 101, 102, 103]\n");
    // A folder of its own: ctest runs in several build folders may run this at the same time.
    char dir[] = "/tmp/attnprof-baseline-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string path = std::string(dir) + "/b.yaml";
    gate::write_baseline(path, run);
    gate::Baseline back = gate::load_baseline(path);
    std::remove(path.c_str());
    rmdir(dir);
    CHECK(back.hardware == "cpu-test");
    CHECK(back.commit == "1f2e3d4");
    REQUIRE(back.cases.count("m/k"));
    CHECK(back.cases["m/k"].samples_ns == std::vector<double>{100, 101, 102, 103});
    CHECK(back.cases["m/k"].n == 4);
  }
  TEST_CASE("large sample sets are thinned to evenly spaced quantiles, lines wrapped") {
    core::Run run;
    std::vector<std::int64_t> ns;
    for (int i = 0; i < 2000; ++i) ns.push_back(10000 + i);
    run.cases.push_back(result("big", ns));
    gate::Baseline b = gate::make_baseline(run, {"h", 100});
    const auto& c = b.cases["big"];
    CHECK(c.n == 2000);
    REQUIRE(c.samples_ns.size() == 100);
    CHECK(c.samples_ns.front() == 10010);  // the 0.5% quantile
    CHECK(c.samples_ns.back() == 11989);   // the 99.5% quantile
    std::string yaml = gate::to_yaml(b);
    std::size_t start = 0, longest = 0;
    for (std::size_t i = yaml.find('\n'); i != std::string::npos; i = yaml.find('\n', start)) {
      longest = std::max(longest, i - start);
      start = i + 1;
    }
    CHECK(longest <= 100);
    CHECK(gate::parse_baseline(yaml, "x").cases["big"].samples_ns == c.samples_ns);
  }
  TEST_CASE("from several runs: run medians of each case, newest run's samples, read back") {
    auto run = [](const std::string& id, std::int64_t started, std::int64_t base) {
      core::Run r;
      r.id = id;
      r.started_ns = started;
      r.env.fields = {{"device.name", "cpu-test"}};
      r.cases.push_back(result("m/k", {base, base + 2, base + 4}));
      return r;
    };
    std::vector<core::Run> runs{run("c", 3, 300), run("b", 2, 200), run("a", 1, 100)};
    runs[2].cases.push_back(result("old/k", {50, 51, 52}));  // only in the oldest run
    gate::Baseline b = gate::make_baseline(runs);
    REQUIRE(b.cases.count("m/k"));
    CHECK(b.cases["m/k"].median_ns == 302);
    CHECK(b.cases["m/k"].samples_ns == std::vector<double>{300, 302, 304});
    CHECK(b.cases["m/k"].run_medians_ns == std::vector<double>{102, 202, 302});  // oldest first
    CHECK(b.cases["old/k"].run_medians_ns.empty());  // one run: no spread
    const std::string yaml = gate::to_yaml(b);
    CHECK(
        yaml.find("    timing: \"cpu.wall\"\n    run_medians_ns: [102, 202, 302]\n    samples_ns: "
                  "[300, 302, 304]\n") != std::string::npos);
    gate::Baseline back = gate::parse_baseline(yaml, "b.yaml");
    CHECK(back.cases["m/k"].run_medians_ns == std::vector<double>{102, 202, 302});
    CHECK(back.cases["m/k"].timing == "cpu.wall");
    // Runs from two environments cannot make one spread.
    runs[1].env.fields["cpu.model"] = "other";
    try {
      gate::make_baseline(runs);
      FAIL("no error");
    } catch (const util::InputError& e) {
      CHECK(std::string(e.what()) == "--run: run c is from environment " +
                                         runs[0].env.fingerprint() + " but run b from " +
                                         runs[1].env.fingerprint() +
                                         ": a baseline's run-to-run spread must come from one "
                                         "environment");
    }
  }
  TEST_CASE("unstable cases stay out of a baseline unless asked; the notes say which and why") {
    auto run = [](const std::string& id, std::int64_t started, bool busy) {
      core::Run r;
      r.id = id;
      r.started_ns = started;
      r.cases.push_back(result("m/k", {100, 102, 104, 106, 108}));
      r.cases[0].spec.hardware.threads = 1;
      // Busy: 3 of 5 samples switched out for half their time (60% > the default 50%).
      for (int i = 0; i < 5; ++i) {
        r.cases[0].samples[i].cpu_ns = busy && i < 3 ? 50 : 100;
        r.cases[0].samples[i].invol_switches = busy && i < 3 ? 1 : 0;
      }
      return r;
    };
    std::vector<core::Run> runs{run("c", 3, true), run("b", 2, false), run("a", 1, false)};
    gate::Baseline b = gate::make_baseline(runs);
    REQUIRE(b.cases.count("m/k"));
    CHECK(b.cases["m/k"].run_medians_ns.size() == 2);  // the newest, busy run adds none
    CHECK(b.notes.empty());                            // the case is in, from run b
    gate::Baseline only = gate::make_baseline(runs[0]);
    CHECK(only.cases.empty());
    CHECK(only.notes.at("m/k") ==
          "unstable: descheduled in 60% of samples (more than 50%); left out of the baseline "
          "(--include-unstable keeps it)");
    CHECK(gate::make_baseline(runs[0], {.include_unstable = true}).cases.count("m/k") == 1);
    CHECK(
        gate::make_baseline(runs, {.include_unstable = true}).cases["m/k"].run_medians_ns.size() ==
        3);
  }
  TEST_CASE("from several runs: runs that timed a case differently add no run median") {
    auto run = [](const std::string& id, std::int64_t base, double graph_batch) {
      core::Run r;
      r.id = id;
      r.cases.push_back(result("g/k", {base, base + 2, base + 4}));
      r.cases.back().spec.hardware.device = "cuda";
      r.cases.back().metrics = {{"measure.graph_batch", graph_batch},
                                {"measure.cupti_fraction", 1}};
      return r;
    };
    // Newest first: graph batches twice, single cold calls once in between.
    gate::Baseline b =
        gate::make_baseline({run("c", 300, 16), run("b", 900, 0), run("a", 100, 16)});
    CHECK(b.cases["g/k"].timing == "cuda.graph.cupti");
    CHECK(b.cases["g/k"].run_medians_ns == std::vector<double>{102, 302});
  }
  TEST_CASE("old files without run medians or timing still read; bad run medians are named") {
    gate::Baseline b =
        gate::parse_baseline("hardware: h\ncases:\n  k: {median_ns: 5}\n", "old.yaml");
    CHECK(b.cases["k"].run_medians_ns.empty());
    CHECK(b.cases["k"].timing.empty());
    CHECK(error_of("hardware: h\ncases:\n  k:\n    median_ns: 5\n    run_medians_ns: [4, -1]\n") ==
          "baselines/cpu.yaml:5:25: a run median must be a positive number, got \"-1\"");
  }
  TEST_CASE("writing creates missing folders; errors name the user's path, not a temporary") {
    char dir[] = "/tmp/attnprof-baseline-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string path = std::string(dir) + "/new/sub/x.yaml";
    gate::Baseline b;
    b.hardware = "h";
    gate::write_baseline(path, b);
    CHECK(gate::load_baseline(path).hardware == "h");
    // A folder where the file should go: the message names x.yaml, never x.yaml.tmp.
    const std::string blocked = std::string(dir) + "/blocked.yaml";
    REQUIRE(mkdir((blocked).c_str(), 0700) == 0);
    try {
      gate::write_baseline(blocked, b);
      FAIL("no error");
    } catch (const util::EnvironmentError& e) {
      CHECK(std::string(e.what()) == blocked + ": cannot write: Is a directory");
    }
    // A file where a folder should be.
    try {
      gate::write_baseline(path + "/y.yaml", b);
      FAIL("no error");
    } catch (const util::EnvironmentError& e) {
      CHECK(std::string(e.what()).rfind(path + "/y.yaml: cannot create folder " + path + ": ", 0) ==
            0);
    }
    std::remove(path.c_str());
    rmdir((std::string(dir) + "/new/sub").c_str());
    rmdir((std::string(dir) + "/new").c_str());
    rmdir(blocked.c_str());
    rmdir(dir);
  }
}
