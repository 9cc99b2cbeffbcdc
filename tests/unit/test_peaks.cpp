// env::peaks: where a CPU's measured peaks are cached, filed per machine and thread count, and
// read back only when whole.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "harness/env/peaks.h"
#include "store_fixtures.h"

using namespace attnprof;

TEST_SUITE("env::peaks") {
  TEST_CASE("cached peaks: filed per key, read back, other entries kept") {
    testing::TempDir d;
    const std::string path = d.file("sub/cpu-peaks.json");
    CHECK_FALSE(env::cached_peaks(path, "a/threads=1"));
    REQUIRE(env::cache_peaks(path, "a/threads=1", {0.05, 12.5}));
    REQUIRE(env::cache_peaks(path, "a/threads=4", {0.2, 30}));
    const auto one = env::cached_peaks(path, "a/threads=1");
    REQUIRE(one);
    CHECK(one->tflops == 0.05);
    CHECK(one->gbps == 12.5);
    CHECK(env::cached_peaks(path, "a/threads=4")->gbps == 30);
    CHECK_FALSE(env::cached_peaks(path, "b/threads=1"));
  }

  TEST_CASE(
      "a cache that is not ours, or a zero peak, is not read; an unwritable one is no error") {
    testing::TempDir d;
    const std::string path = d.file("cpu-peaks.json");
    std::ofstream(path) << "not json";
    CHECK_FALSE(env::cached_peaks(path, "a"));
    std::ofstream(path) << R"({"a": {"tflops": 0, "gbps": 10}, "b": {"tflops": "x"}})";
    CHECK_FALSE(env::cached_peaks(path, "a"));
    CHECK_FALSE(env::cached_peaks(path, "b"));
    CHECK(env::cache_peaks(path, "a", {1, 2}));  // a damaged file is replaced whole
    CHECK(env::cached_peaks(path, "a")->tflops == 1);
    CHECK_FALSE(env::cache_peaks("", "a", {1, 2}));
    CHECK_FALSE(env::cache_peaks("/proc/attnprof-no/cpu-peaks.json", "a", {1, 2}));
  }

  TEST_CASE("the key names the CPU and the threads; the path follows the cache variables") {
    env::Description d;
    d.cpu_model = "Some CPU";
    d.cpu_logical = 8;
    const std::string key = env::cpu_peaks_key(d, 4);
    CHECK(key.ends_with("/threads=4"));
    CHECK(key != env::cpu_peaks_key(d, 2));
    env::Description other = d;
    other.cpu_model = "Another CPU";
    CHECK(env::cpu_peaks_key(other, 4) != key);
    const char* had = std::getenv("ATTNPROF_CACHE_DIR");
    const std::string saved = had ? had : "";
    setenv("ATTNPROF_CACHE_DIR", "/tmp/x", 1);
    CHECK(env::peaks_cache_path() == "/tmp/x/cpu-peaks.json");
    unsetenv("ATTNPROF_CACHE_DIR");
    if (const char* home = std::getenv("HOME"); home && *home && !std::getenv("XDG_CACHE_HOME"))
      CHECK(env::peaks_cache_path() == std::string(home) + "/.cache/attnprof/cpu-peaks.json");
    if (had) setenv("ATTNPROF_CACHE_DIR", saved.c_str(), 1);
  }
}
