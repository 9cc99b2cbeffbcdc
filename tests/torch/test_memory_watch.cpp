// runner::MemoryWatch: what the measured calls did to memory. On the CPU, pages touched for the
// first time between begin() and end() are minor faults, counted per call, and memory kept is
// resident-set growth; stretches add up and what happens between them is not counted. A GPU
// watch on a machine without one records nothing and never fails.
#include <sys/mman.h>

#include <cstring>

#include "harness/core/metric_names.h"
#include "tests/torch/torch_doctest.h"
#include "worker/runner/memory_watch.h"

using namespace attnprof;

namespace {

constexpr std::size_t kMiB = 1 << 20;

// Maps `mib` MiB of fresh anonymous memory and touches every page: one minor fault a page.
void* touch_fresh(std::size_t mib) {
  void* p = mmap(nullptr, mib * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  std::memset(p, 1, mib * kMiB);
  return p;
}

}  // namespace

TEST_SUITE("runner::memory_watch") {
  TEST_CASE("CPU: fresh pages are minor faults per call; memory kept is resident growth") {
    runner::MemoryWatch w(-1);
    CHECK(w.metrics().empty());  // nothing measured yet
    w.begin();
    void* kept = touch_fresh(32);  // 8192 pages of 4 KiB, kept
    w.end(4);
    void* between = touch_fresh(32);  // between stretches: not counted
    w.begin();
    w.end(4);
    const auto m = w.metrics();
    munmap(kept, 32 * kMiB);
    munmap(between, 32 * kMiB);
    CHECK(m.at(core::kMemoryCallsMetric) == 8);
    // 8192 faults over 8 calls: about 1024 a call (a few more from the process itself).
    CHECK(m.at(core::kMinorFaultsMetric) >= 1000);
    CHECK(m.at(core::kMinorFaultsMetric) < 1300);
    CHECK(m.at(core::kMajorFaultsMetric) == 0);
    CHECK(m.at(core::kRssGrowthMetric) >= 31.0 * kMiB);
    CHECK(m.at(core::kRssGrowthMetric) < 40.0 * kMiB);
    CHECK_FALSE(m.count(core::kReservedPeakMetric));
  }

  TEST_CASE("GPU watch without a GPU: no figures, no failure") {
    runner::MemoryWatch w(0);
    w.begin();
    w.end(10);
    CHECK(w.metrics().empty());
  }
}
