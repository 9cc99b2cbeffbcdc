// The reports a user reads in a terminal and a browser, end to end: tables that fit $COLUMNS with
// case keys whole, list and trend as they print, a glob's history report, a CPU run's roof.
#include <doctest/doctest.h>

#include <string>

#include "tests/torch/cli_helpers.h"

using namespace clitest;

namespace {

// Two tiny CPU cases, one of them a plugin op with a long key.
const char* kSuite = R"(name: tiny
models:
  tiny: {heads: 2, kv_heads: 2, head_dim: 16, hidden: 32, max_positions: 512}
model: tiny
hardware: {device: cpu, threads: 1}
measure: {warmup: 5ms, min_samples: 20, max_samples: 40, max_noise: 50%, time_budget: 1s}
workloads:
  - name: prefill
    batch: 1
    seq_len: 32
    mask: none
    kernels: [eager, "op:attnprof_test::attention"]
)";

const std::string kPluginKey = "tiny/prefill/b1-s32-fp32-none/op:attnprof_test::attention";

std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::size_t w = 0;  // columns: UTF-8 lead bytes
    for (std::size_t i = start; i < end; ++i) w += (text[i] & 0xC0) != 0x80;
    widest = std::max(widest, w);
    start = end + 1;
  }
  return widest;
}

std::string plugin() {
  return std::string(" --plugin '") + ATTNPROF_TEST_PLUGIN + "'";
}

}  // namespace

TEST_SUITE("cli.reports") {
  TEST_CASE("tables fit COLUMNS 80 and 120 with keys whole; --wide prints every column") {
    TempDir d;
    d.write("t.yaml", kSuite);
    Result run =
        attnprof(d.path, "run t.yaml --db h.db --commit 0123456789abcdef0123456789abcdef01234567" +
                             plugin());
    INFO(run.out);
    REQUIRE(run.rc == 0);
    for (int width : {80, 120}) {
      const std::string columns = "COLUMNS=" + std::to_string(width) + " ";
      Result show = shell_in(d.path, columns + "'" ATTNPROF_BINARY_DIR
                                               "/attnprof' show latest "
                                               "--db h.db --case '*'");
      INFO(show.out);
      CHECK(show.rc == 0);
      CHECK(widest_line(show.out) <= static_cast<std::size_t>(width));
      CHECK(show.out.find(kPluginKey + "  ok") != std::string::npos);
      CHECK(show.out.find("cost matrix: " + kPluginKey + "\n") != std::string::npos);
      CHECK(show.out.find("columns: ") != std::string::npos);  // what was left out is named
      Result history = shell_in(d.path, columns + "'" ATTNPROF_BINARY_DIR
                                                  "/attnprof' history "
                                                  "--db h.db --metric summary.median_ns");
      INFO(history.out);
      CHECK(widest_line(history.out) <= static_cast<std::size_t>(width));
      CHECK(history.out.find(kPluginKey) != std::string::npos);
      // trend: the key whole on its line, its figures under it, within the width.
      Result trend =
          shell_in(d.path, columns + "'" ATTNPROF_BINARY_DIR "/attnprof' trend --db h.db '*op:*'");
      INFO(trend.out);
      CHECK(trend.rc == 0);
      CHECK(widest_line(trend.out) <= static_cast<std::size_t>(width));
      CHECK(trend.out.find(kPluginKey + (width == 80 ? "\n" : "  [")) != std::string::npos);
      CHECK(trend.out.find(" (0123456789ab) to ") != std::string::npos);
    }
    Result wide = attnprof(d.path, "show latest --db h.db --case '*' --wide");
    CHECK(wide.rc == 0);
    CHECK(widest_line(wide.out) > 120);
    CHECK(wide.out.find("left out") == std::string::npos);
    CHECK(wide.out.find(" KiB") != std::string::npos);  // sizes in binary units
  }

  TEST_CASE("show prints a stored run's cases as run did: not checked, unstable, the counts") {
    TempDir d;
    std::string unchecked = kSuite;
    unchecked.replace(unchecked.find("    mask: none\n"), 15,
                      "    mask: none\n    reference: none\n");
    d.write("t.yaml", unchecked);
    Result run = attnprof(d.path, "run t.yaml --db h.db --no-trace --case '*eager'");
    INFO(run.out);
    REQUIRE(run.rc == 0);
    Result show = attnprof(d.path, "show latest --db h.db");
    INFO(show.out);
    CHECK(show.rc == 0);
    CHECK(show.out.find("tiny/prefill/b1-s32-fp32-none/eager  ok ") != std::string::npos);
    // The case's note line (after "unstable: ...; " when a busy machine descheduled it).
    CHECK(show.out.find("not checked (reference: none)\n") != std::string::npos);
    // The counts line as run printed it, to its end (a busy machine adds "; 1 unstable: ...").
    auto counts = [](const std::string& out) {
      const std::size_t at = out.find("1 cases: ");
      return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
    };
    CHECK(counts(show.out).starts_with(
        "1 cases: 1 ok, 0 failed, 0 skipped, 0 error; 1 not checked (reference: none)"));
    CHECK(counts(show.out) == counts(run.out));
  }

  TEST_CASE("list takes --plugin and estimates in time units; trend names its runs' dates") {
    TempDir d;
    d.write("t.yaml", kSuite);
    Result list = attnprof(d.path, "list t.yaml" + plugin());
    INFO(list.out);
    CHECK(list.rc == 0);
    CHECK(list.out.find(kPluginKey + "  cpu") != std::string::npos);
    CHECK(list.out.find("2 cases, about ") != std::string::npos);
    CHECK(list.out.find("about 0 s") == std::string::npos);
    // With the library loaded, an op it does not register is refused, as validate and run do.
    std::string typo = kSuite;
    typo.replace(typo.find("attnprof_test::attention"), 24, "attnprof_test::atention");
    d.write("typo.yaml", typo);
    Result bad = attnprof(d.path, "list typo.yaml" + plugin());
    CHECK(bad.rc == 2);
    CHECK(bad.out.find("registered no op \"attnprof_test::atention\"") != std::string::npos);
    Result empty = attnprof(d.path, "trend --db h.db");
    CHECK(empty.rc == 2);
    CHECK(empty.out.find("trend needs a case key or glob") != std::string::npos);
    REQUIRE(attnprof(d.path, "run t.yaml --db h.db --no-trace --case '*eager'").rc == 0);
    Result named = attnprof(d.path, "trend --db h.db");
    CHECK(named.rc == 2);
    CHECK(named.out.find("cases of the newest run: tiny/prefill/b1-s32-fp32-none/eager") !=
          std::string::npos);
    Result trend = attnprof(d.path, "trend --db h.db 'tiny/*'");
    INFO(trend.out);
    CHECK(trend.rc == 0);
    CHECK(trend.out.find("1 runs, ") != std::string::npos);
    CHECK(trend.out.find("..") == std::string::npos);  // no empty commit range
  }

  TEST_CASE("report --case with a glob draws every matching case") {
    TempDir d;
    d.write("t.yaml", kSuite);
    for (const char* commit : {"c1", "c2"})
      REQUIRE(attnprof(d.path,
                       std::string("run t.yaml --db h.db --no-trace --commit ") + commit + plugin())
                  .rc == 0);
    Result r = attnprof(d.path, "report --db h.db --case 'tiny/*' --html h.html");
    INFO(r.out);
    CHECK(r.rc == 0);
    CHECK(r.out.find("history of tiny/prefill/b1-s32-fp32-none/eager (2 runs") !=
          std::string::npos);
    CHECK(r.out.find("history of " + kPluginKey + " (2 runs") != std::string::npos);
    const std::string html = d.read("h.html");
    CHECK(html.find("<title>history of tiny/prefill/b1-s32-fp32-none/eager</title>") !=
          std::string::npos);
    CHECK(html.find("<title>history of " + kPluginKey + "</title>") != std::string::npos);
    CHECK(html.find("<title>attnprof history: tiny/* (2 cases)</title>") != std::string::npos);
  }

  TEST_CASE("a CPU run's roofline has a roof from a probe measured once, or the scenario's") {
    TempDir d;
    d.write("t.yaml", kSuite);
    const std::string cache = "ATTNPROF_CACHE_DIR='" + d.path.string() + "/cache' ";
    const std::string bin = "'" ATTNPROF_BINARY_DIR "/attnprof' ";
    REQUIRE(shell_in(d.path, cache + bin + "run t.yaml --db h.db --case '*eager'").rc == 0);
    const std::string probed = d.read("cache/cpu-peaks.json");
    CHECK(probed.find("/threads=1\": {") != std::string::npos);
    REQUIRE(shell_in(d.path, cache + bin + "run t.yaml --db h.db --case '*eager'").rc == 0);
    CHECK(d.read("cache/cpu-peaks.json") == probed);  // measured once, then read
    REQUIRE(attnprof(d.path, "report --db h.db --html run.html").rc == 0);
    std::string html = d.read("run.html");
    CHECK(html.find("class=\"roof\"") != std::string::npos);
    CHECK(html.find("roof: measured (triad and GEMM probe)") != std::string::npos);
    CHECK(html.find("<text class=\"mark\"") != std::string::npos);
    std::string given = kSuite;
    given.replace(given.find("threads: 1}"), 11, "threads: 1, peak_tflops: 2, peak_gbps: 50}");
    d.write("given.yaml", given);
    REQUIRE(shell_in(d.path, cache + bin + "run given.yaml --db g.db --case '*eager'").rc == 0);
    REQUIRE(attnprof(d.path, "report --db g.db --html given.html").rc == 0);
    html = d.read("given.html");
    CHECK(html.find("peaks: 2 TFLOP/s, 50 GB/s") != std::string::npos);
    CHECK(html.find("roof: the scenario&apos;s hardware.peak_*") != std::string::npos);
  }
}
