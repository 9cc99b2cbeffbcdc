// Hardware-counter configuration through CUPTI's profiler host API for chip GH100 (H100/H200):
// works without a GPU. Never calls cuptiDeviceGetChipName here: it crashes without a driver.
#include <doctest/doctest.h>

#include <algorithm>

#include "harness/util/error.h"
#include "worker/trace/counters.h"

using namespace attnprof;

TEST_SUITE("trace::Counters") {
  TEST_CASE("GH100 is a chip the host API knows") {
    const auto chips = trace::supported_counter_chips();
    CHECK(std::find(chips.begin(), chips.end(), "GH100") != chips.end());
  }

  TEST_CASE("DRAM bytes and GPU time build a one-pass config image on GH100") {
    const auto c = trace::build_counter_config("GH100", trace::default_counter_metrics());
    CHECK(c.chip == "GH100");
    CHECK(c.metrics == std::vector<std::string>{"dram__bytes_read.sum", "dram__bytes_write.sum",
                                                "gpu__time_duration.sum"});
    CHECK(c.image.size() > 0);
    CHECK(c.passes == 1);
    // Not all zeros: CUPTI wrote an image.
    CHECK(std::any_of(c.image.begin(), c.image.end(), [](auto b) { return b != 0; }));
  }

  TEST_CASE("an unknown metric is named in the error") {
    try {
      trace::build_counter_config("GH100", {"dram__bytes_read.sum", "dram__bogus.sum"});
      FAIL("expected an error");
    } catch (const util::EnvironmentError& e) {
      const std::string msg = e.what();
      CHECK(msg.rfind("cuptiProfilerHostConfigAddMetrics: ", 0) == 0);
      CHECK(msg.find("(metric \"dram__bogus.sum\" on chip GH100)") != std::string::npos);
    }
  }

  TEST_CASE("an unknown chip is named in the error") {
    try {
      trace::build_counter_config("GX999", trace::default_counter_metrics());
      FAIL("expected an error");
    } catch (const util::EnvironmentError& e) {
      const std::string msg = e.what();
      CHECK(msg.rfind("cuptiProfilerHostInitialize: ", 0) == 0);
      CHECK(msg.find("(chip GX999)") != std::string::npos);
    }
  }

  TEST_CASE("no metrics is an error, not an empty image") {
    CHECK_THROWS_WITH_AS(trace::build_counter_config("GH100", {}),
                         "no hardware counter metrics requested", util::EnvironmentError);
  }
}
