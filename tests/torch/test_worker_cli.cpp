// attnprof with its worker, end to end: kernels that crash or hang cost their case, not the
// run; a run killed with kill -9 keeps its finished cases and --resume completes it; attnprof ab
// passes an A/A and catches a planted slowdown, saying which op moved; attnprof itself links no
// LibTorch.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/torch/cli_helpers.h"

using namespace clitest;

namespace {

const std::string plugin = ATTNPROF_TEST_PLUGIN;

std::string suite(const std::string& workloads, const std::string& budget = "2s") {
  return R"(name: w
models:
  tiny: {heads: 2, kv_heads: 2, head_dim: 16, hidden: 32, max_positions: 512}
model: tiny
hardware: {device: cpu, threads: 1}
measure: {warmup: 5ms, min_samples: 20, max_samples: 40, max_noise: 50%, time_budget: )" +
         budget + R"(}
gate: {tolerance: 10%}
workloads:
)" + workloads;
}

std::string workload(const std::string& name, const std::string& kernels, int seq = 32) {
  return "  - name: " + name + "\n    batch: 1\n    seq_len: " + std::to_string(seq) +
         "\n    kernels: [" + kernels + "]\n";
}

std::string sh(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  return out;
}

}  // namespace

TEST_SUITE("cli.worker") {
  TEST_CASE("attnprof links no LibTorch or CUDA: history commands start without them") {
    const std::string libs = sh("ldd '" ATTNPROF_BINARY_DIR "/attnprof'");
    CHECK(libs.find("libtorch") == std::string::npos);
    CHECK(libs.find("libc10") == std::string::npos);
    CHECK(libs.find("libcudart") == std::string::npos);
    const std::string worker_libs = sh("ldd '" ATTNPROF_BINARY_DIR "/attnprof-worker'");
    CHECK(worker_libs.find("libtorch") != std::string::npos);
  }

  TEST_CASE("a kernel that crashes or hangs ends its case; the run goes on and is stored") {
    TempDir d;
    d.write("s.yaml", suite(workload("a", "\"op:attnprof_test::attention\"") +
                            workload("b", "\"op:attnprof_test::attention_crash\"") +
                            workload("c", "\"op:attnprof_test::attention_hang\"") +
                            workload("d", "\"op:attnprof_test::attention\"", 48)));
    Result r = attnprof(d.path, "run s.yaml --db r.db --case-timeout 5 --plugin '" + plugin + "'");
    INFO(r.out);
    CHECK(r.rc == 3);
    CHECK(r.out.find("error: worker died, signal 11 (SIGSEGV)") != std::string::npos);
    CHECK(r.out.find("error: worker hung: no answer in time; killed") != std::string::npos);
    CHECK(r.out.find("4 cases: 2 ok, 0 failed, 0 skipped, 2 error") != std::string::npos);
    CHECK(sh("sqlite3 '" + (d.path / "r.db").string() +
             "' \"SELECT status, (SELECT count(*) FROM cases) FROM runs\"") == "complete|4\n");
  }

  TEST_CASE("kill -9 mid-run keeps the finished cases; --resume runs only the rest") {
    TempDir d;
    d.write("s.yaml", suite(workload("a", "\"op:attnprof_test::attention\"") +
                            workload("b", "\"op:attnprof_test::attention_hang\"") +
                            workload("c", "\"op:attnprof_test::attention\"", 48)));
    const std::string db = (d.path / "r.db").string();
    sh("cd '" + d.path.string() +
       "' && ( '" ATTNPROF_BINARY_DIR "/attnprof' run s.yaml --db r.db " +
       "--case-timeout 120 --plugin '" + plugin + "' > log 2>&1 & echo $! > pid )");
    // Wait until the first case is stored (the second one hangs), then kill the parent hard.
    std::string stored;
    for (int i = 0; i < 600 && stored != "1\n"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      stored = sh("sqlite3 '" + db + "' 'SELECT count(*) FROM cases' 2>/dev/null");
    }
    REQUIRE(stored == "1\n");
    sh("kill -9 $(cat '" + (d.path / "pid").string() + "')");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(sh("sqlite3 '" + db + "' 'SELECT status FROM runs'") == "incomplete\n");
    const std::string first =
        sh("sqlite3 '" + db + "' 'SELECT count(*) FROM samples'");  // the finished case's samples

    Result r = attnprof(
        d.path, "run s.yaml --db r.db --resume latest --case-timeout 3 --plugin '" + plugin + "'");
    INFO(r.out);
    CHECK(r.out.find("resuming run") != std::string::npos);
    CHECK(r.out.find("1 of 3 case(s) stored, 2 to run") != std::string::npos);
    CHECK(r.rc == 3);  // the hanging case is an error this time
    CHECK(sh("sqlite3 '" + db + "' \"SELECT status, (SELECT count(*) FROM cases) FROM runs\"") ==
          "complete|3\n");
    CHECK(sh("sqlite3 '" + db + "' 'SELECT count(*) FROM samples WHERE case_id = 1'") == first);
    Result again =
        attnprof(d.path, "run s.yaml --db r.db --resume latest --plugin '" + plugin + "'");
    CHECK(again.rc == 2);
    CHECK(again.out.find("--resume: r.db holds no incomplete run to resume") != std::string::npos);
  }

  TEST_CASE("a worker of another protocol version is refused with both versions, exit 3") {
    TempDir d;
    d.write("w", "#!/bin/sh\nexec '" + std::string(ATTNPROF_TEST_DATA) +
                     "/workers/fake-worker' --mode=v99\n");
    sh("chmod +x '" + (d.path / "w").string() + "'");
    Result r = attnprof(d.path, "run --worker ./w --db r.db");
    CHECK(r.rc == 3);
    CHECK(r.out.find("speaks worker protocol 99 (build 9.9.9), this attnprof speaks protocol 1") !=
          std::string::npos);
  }

  TEST_CASE("a misspelt plugin op is bad input before anything is measured") {
    TempDir d;
    d.write("s.yaml",
            suite(workload("a", "eager") + workload("b", "\"op:attnprof_test::attentoin\"")));
    Result v = attnprof(d.path, "validate s.yaml --plugin '" + plugin + "'");
    INFO(v.out);
    CHECK(v.rc == 2);
    CHECK(v.out.find("s.yaml:13:5: kernel \"op:attnprof_test::attentoin\": the loaded plugins "
                     "registered no op \"attnprof_test::attentoin\" (did you mean "
                     "\"attnprof_test::attention\"?)") != std::string::npos);
    Result r = attnprof(d.path, "run s.yaml --db r.db --plugin '" + plugin + "'");
    CHECK(r.rc == 2);
    CHECK(r.out.find("[1/") == std::string::npos);       // nothing ran
    CHECK(attnprof(d.path, "validate s.yaml").rc == 0);  // without plugins: syntax only
  }

  TEST_CASE("--plugin with a bare file name loads the file in this folder") {
    TempDir d;
    sh("cp '" + plugin + "' '" + (d.path / "libmine.so").string() + "'");
    d.write("s.yaml", suite(workload("a", "\"op:attnprof_test::attention\"")));
    Result r = attnprof(d.path, "run s.yaml --db r.db --plugin libmine.so");
    INFO(r.out);
    CHECK(r.rc == 0);
    Result e = attnprof(d.path, "env --plugin libmine.so");
    CHECK(e.out.find("plugin:         libmine.so: op:attnprof_test::attention,") !=
          std::string::npos);
  }

  TEST_CASE("a custom mask reaches the worker: its file travels with the case") {
    TempDir d;
    std::string mask;  // 8 x 8: each query sees itself and the key before it
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 8; ++j) mask += (j == i || j + 1 == i) ? "0 " : "-inf ";
      mask += "\n";
    }
    d.write("m.mask", mask);
    d.write("s.yaml", suite("  - name: a\n    batch: 1\n    seq_len: 8\n    mask: custom\n"
                            "    mask_file: m.mask\n    kernels: [sdpa.math, eager]\n"));
    Result r = attnprof(d.path, "run s.yaml --db r.db");
    INFO(r.out);
    CHECK(r.rc == 0);
    CHECK(r.out.find("2 cases: 2 ok") != std::string::npos);
  }

  TEST_CASE("two plugins registering one namespace: exit 3 with the reason, not an abort") {
    TempDir d;
    sh("cp '" + plugin + "' '" + (d.path / "copy.so").string() + "'");
    d.write("s.yaml", suite(workload("a", "\"op:attnprof_test::attention\"")));
    Result r = attnprof(d.path, "run s.yaml --db r.db --plugin '" + plugin + "' --plugin copy.so");
    INFO(r.out);
    CHECK(r.rc == 3);
    CHECK(r.out.find("could not start: worker died, signal 6 (SIGABRT)") != std::string::npos);
    CHECK(r.out.find("give each version to its own worker") != std::string::npos);
  }

  TEST_CASE("ab: an A/A passes; a planted 40% slowdown is a regression with the op that moved") {
    TempDir d;
    d.write("s.yaml", suite(workload("a", "\"op:attnprof_test::attention_slow\"", 64), "4s"));
    const std::string both = " --base-arg=--plugin=" + plugin + " --head-arg=--plugin=" + plugin;
    // One pair of workers cannot show its own bias: no verdict may rest on it.
    Result one = attnprof(d.path, "ab s.yaml --db ab.db --min-pairs 1");
    CHECK(one.rc == 2);
    CHECK(one.out.find("--min-pairs: must be between 2 and --max-pairs (12): one pair of workers "
                       "cannot show its own bias") != std::string::npos);
    Result dur = attnprof(d.path, "ab s.yaml --db ab.db --time-limit 3parsecs");
    CHECK(dur.rc == 2);
    CHECK(dur.out.find("--time-limit: expected seconds or a duration such as 90s or 3min, got "
                       "3parsecs") != std::string::npos);
    // A duration as a scenario writes it is taken (here a limit the session stays well within).
    Result aa = attnprof(
        d.path, "ab s.yaml --db ab.db --time-limit 10min --base '" ATTNPROF_BINARY_DIR "'" + both);
    INFO(aa.out);
    CHECK(aa.rc == 0);
    CHECK(aa.out.find("1 unchanged") != std::string::npos);
    // Settled on at least 3 pairs of fresh workers, every round stored with its pair.
    CHECK(aa.out.find("each case measured by 3 to 12 pairs of fresh workers; both workers of a "
                      "pair on the same CPUs") != std::string::npos);
    CHECK(aa.out.find("paired on lower quartiles, ") != std::string::npos);
    CHECK(sh("sqlite3 '" + (d.path / "ab.db").string() +
             "' \"SELECT count(DISTINCT pass) >= 3 FROM ab_rounds\"") == "1\n");
    // Every round keeps each batch's lower quartile beside its median, from 8 calls or more.
    CHECK(sh("sqlite3 '" + (d.path / "ab.db").string() +
             "' \"SELECT count(*) FROM ab_rounds WHERE NOT (base_q1_ns > 0 AND base_q1_ns <= "
             "base_ns AND head_q1_ns > 0 AND head_q1_ns <= head_ns AND base_n >= 8 AND "
             "head_n >= 8)\"") == "0\n");

    Result slow = attnprof(d.path, "ab s.yaml --db ab.db --base '" ATTNPROF_BINARY_DIR "'" + both +
                                       " --head-arg=--env=ATTNPROF_TEST_EXTRA=0.4 --json v.json");
    INFO(slow.out);
    CHECK(slow.rc == 1);
    CHECK(slow.out.find("1 regression") != std::string::npos);
    CHECK(slow.out.find("what moved in tiny/prefill/b1-s64-fp32-none/") != std::string::npos);
    CHECK(slow.out.find("attnprof_test::attention_slow") != std::string::npos);
    CHECK(d.read("v.json").find("\"mode\": \"ab\"") != std::string::npos);
    CHECK(sh("sqlite3 '" + (d.path / "ab.db").string() +
             "' \"SELECT count(DISTINCT pair_id), count(*) FROM runs\"") == "2|4\n");

    // The stored A/B judged again: the same rounds, another tolerance.
    // A tolerance far beyond the planted 40% (measured 1.4x to 1.8x here) makes it unchanged.
    Result again = attnprof(d.path, "compare --db ab.db --pair latest --tolerance 200%");
    INFO(again.out);
    CHECK(again.rc == 0);
    CHECK(again.out.find("1 unchanged") != std::string::npos);
    CHECK(attnprof(d.path, "compare --db ab.db --pair latest").rc == 1);
    CHECK(attnprof(d.path, "compare --db ab.db --pair nope").rc == 2);
  }
}
