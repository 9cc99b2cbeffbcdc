// Numbers a worker would choke on are refused when parsed (harness/cli/bounds.h): --case-timeout
// and --threads, on run (and ab, and attnprof-worker), exit 2 with the option named and nothing
// written; and a case that needs more memory than the machine has is named by validate and
// skipped by run with both figures.
#include <doctest/doctest.h>
#include <sched.h>

#include <string>

#include "tests/torch/cli_helpers.h"

using namespace clitest;

namespace {

int usable_cpus() {
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  return CPU_COUNT(&set);
}

}  // namespace

TEST_SUITE("cli.bounds") {
  TEST_CASE("--case-timeout inf, 1e10, 0, -1 or nan: exit 2 naming it, before anything runs") {
    TempDir d;
    for (const char* v : {"inf", "1e10", "0", "-1", "nan"}) {
      for (const char* cmd : {"run", "ab"}) {
        CAPTURE(v);
        CAPTURE(cmd);
        Result r = attnprof(d.path, std::string(cmd) + " --db h.db --case-timeout=" + v);
        CHECK(r.rc == 2);
        CHECK(r.out.find(std::string("--case-timeout: must be a number of seconds above 0 and at "
                                     "most 86400 (a day), got ") +
                         v + " (leave it out for each case's own deadline)") != std::string::npos);
      }
    }
    CHECK_FALSE(fs::exists(d.path / "h.db"));
  }

  TEST_CASE("--threads 100000, 0 or -5: exit 2 with the bound, 4 x this process's CPUs") {
    TempDir d;
    const int cpus = usable_cpus();
    for (const char* v : {"100000", "0", "-5"}) {
      CAPTURE(v);
      const std::string want = "--threads: must be between 1 and " + std::to_string(4 * cpus) +
                               " (4 x the " + std::to_string(cpus) +
                               " CPUs this process may use), got " + v;
      Result r = attnprof(d.path, std::string("run --db h.db --threads ") + v);
      CHECK(r.rc == 2);
      CHECK(r.out.find(want) != std::string::npos);
      Result w = worker(d.path, std::string("--threads=") + v);
      CHECK(w.rc == 2);
      CHECK(w.out.find(want) != std::string::npos);
    }
    CHECK_FALSE(fs::exists(d.path / "h.db"));
  }

  TEST_CASE("a shape larger than the machine's memory: validate names it, run skips it") {
    TempDir d;
    // 64 heads of 128 over 262144 positions: the check's fp32 scores alone are 2 x 16 TiB.
    d.write("big.yaml", R"(name: big
models:
  huge: {heads: 64, kv_heads: 64, head_dim: 128, hidden: 8192, max_positions: 262144}
model: huge
hardware: {device: cpu}
workloads:
  - {name: w, batch: 1, seq_len: 262144, kernels: [eager]}
)");
    Result v = attnprof(d.path, "validate big.yaml");
    INFO(v.out);
    CHECK(v.rc == 0);
    CHECK(v.out.find("memory: the largest case needs about 32832.00 GiB "
                     "(huge/prefill/b1-s262144-fp32-none/eager)\n") != std::string::npos);
    CHECK(v.out.find("big.yaml:7:5: note: case huge/prefill/b1-s262144-fp32-none/eager needs "
                     "about 32832.00 GiB (estimated from its shape: inputs, output, the check's "
                     "fp32 scores), more than the ") != std::string::npos);
    CHECK(v.out.find(" GiB this machine has available; `attnprof run` skips it here\n") !=
          std::string::npos);
    Result r = attnprof(d.path, "run big.yaml --db h.db --no-trace");
    INFO(r.out);
    CHECK(r.rc == 0);
    CHECK(r.out.find("huge/prefill/b1-s262144-fp32-none/eager: skipped: needs about 32832.00 GiB "
                     "(estimated from its shape: inputs, output, the check's fp32 scores), more "
                     "than the ") != std::string::npos);
    CHECK(r.out.find("1 cases: 0 ok, 0 failed, 1 skipped, 0 error") != std::string::npos);
  }
}
