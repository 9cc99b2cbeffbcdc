// A busy machine is named, not measured (core/stability.h): `attnprof run` beside two busy
// threads flags its 2-thread case unstable in the results table, the store keeps why, and
// `baseline update` leaves the case out; the same kind of run without them is not flagged.
#include <doctest/doctest.h>
#include <sched.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/torch/cli_helpers.h"

using namespace clitest;

namespace {

// Every thread this test starts, and the processes they start, on two CPUs: the hog and the
// case contend for the same cores on a machine of any size.
class TwoCpus {
 public:
  TwoCpus() {
    sched_getaffinity(0, sizeof m_saved, &m_saved);
    cpu_set_t two;
    CPU_ZERO(&two);
    for (int cpu = 0; cpu < CPU_SETSIZE && CPU_COUNT(&two) < 2; ++cpu)
      if (CPU_ISSET(cpu, &m_saved)) CPU_SET(cpu, &two);
    m_ok = CPU_COUNT(&two) == 2 && sched_setaffinity(0, sizeof two, &two) == 0;
  }
  ~TwoCpus() { sched_setaffinity(0, sizeof m_saved, &m_saved); }
  bool ok() const { return m_ok; }

 private:
  cpu_set_t m_saved;
  bool m_ok = false;
};

// Two threads that spin until destroyed.
class Hog {
 public:
  Hog() {
    for (int i = 0; i < 2; ++i)
      m_threads.emplace_back([this] {
        volatile std::uint64_t x = 0;
        while (!m_stop.load(std::memory_order_relaxed)) x = x + 1;
      });
  }
  ~Hog() {
    m_stop = true;
    for (auto& t : m_threads) t.join();
  }

 private:
  std::atomic<bool> m_stop{false};
  std::vector<std::thread> m_threads;
};

}  // namespace

TEST_SUITE("cli.stability") {
  TEST_CASE("run beside two busy threads: its 2-thread case is unstable, and no baseline") {
    TwoCpus pin;
    if (!pin.ok()) {
      MESSAGE("this machine lets the test use fewer than 2 CPUs: nothing to contend for");
      return;
    }
    TempDir d;
    // Calls of a few ms on two threads: each spans a scheduler time slice or more, so with
    // two busy threads on the same two CPUs nearly every call loses a thread for a while.
    d.write("s.yaml", R"(name: s
model: bert-base
hardware: {device: cpu, threads: 2}
measure: {warmup: 20ms, min_samples: 20, max_samples: 30, max_noise: 50%, time_budget: 2s}
workloads:
  - {name: w, batch: 1, seq_len: 256, kernels: [sdpa.math]}
)");
    Result r;
    {
      Hog hog;
      r = attnprof(d.path, "run s.yaml --db h.db --no-trace");
    }
    INFO(r.out);
    REQUIRE(r.rc == 0);
    CHECK(r.out.find("bert-base/prefill/b1-s256-fp32-none/sdpa.math  ok") != std::string::npos);
    CHECK(r.out.find("    unstable: descheduled in ") != std::string::npos);
    CHECK(r.out.find("1 cases: 1 ok, 0 failed, 0 skipped, 0 error; 1 unstable: a busy machine "
                     "descheduled the worker, their figures are not the kernels' (baselines "
                     "leave them out)") != std::string::npos);
    // Stored: read back, the case is still unstable, and a baseline leaves it out unless asked.
    Result b = attnprof(d.path, "baseline update --db h.db -o b.yaml");
    INFO(b.out);
    CHECK(b.rc == 0);
    CHECK(b.out.find("0 case(s)") != std::string::npos);
    CHECK(b.out.find("left out: bert-base/prefill/b1-s256-fp32-none/sdpa.math: unstable: "
                     "descheduled in ") != std::string::npos);
    Result keep = attnprof(d.path, "baseline update --db h.db -o b.yaml --include-unstable");
    CHECK(keep.out.find("1 case(s)") != std::string::npos);
  }

  TEST_CASE("run on a machine as it is: a short 1-thread case is not unstable") {
    // The CI machine may itself be loaded (other jobs on its two cores), so the unflagged side
    // is decided where load alone cannot flag it: one thread, calls of tens of microseconds,
    // so that a time slice (milliseconds) ends inside a call for a few percent of calls only,
    // however many tasks share the CPU, and a generous threshold of 50%. What a loaded machine
    // does to a 2-thread case is the other test's subject.
    TempDir d;
    d.write("s.yaml", R"(name: s
models:
  tiny: {heads: 2, kv_heads: 2, head_dim: 16, hidden: 32, max_positions: 512}
model: tiny
hardware: {device: cpu, threads: 1}
measure: {warmup: 20ms, min_samples: 50, max_samples: 200, max_noise: 50%, time_budget: 1s,
          max_descheduled: 50%}
workloads:
  - {name: w, batch: 1, seq_len: 16, kernels: [cpu.naive]}
)");
    Result r = attnprof(d.path, "run s.yaml --db h.db --no-trace");
    INFO(r.out);
    REQUIRE(r.rc == 0);
    CHECK(r.out.find("unstable") == std::string::npos);
    CHECK(r.out.find("1 cases: 1 ok, 0 failed, 0 skipped, 0 error\n") != std::string::npos);
  }
}
