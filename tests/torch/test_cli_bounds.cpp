// Numbers out of range are refused when parsed (harness/cli/bounds.h): every numeric option of
// every subcommand, exit 2 with the option named and nothing written (--case-timeout and
// --threads with their own bounds, on run, ab and attnprof-worker; ab's gate options, which
// used to let nan turn a measurement into a pass); the date filters against the clock's range;
// and a case that needs more memory than the machine has is named by validate and skipped by
// run with both figures.
#include <doctest/doctest.h>
#include <sched.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/torch/cli_helpers.h"

using namespace clitest;

namespace {

int usable_cpus() {
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  return CPU_COUNT(&set);
}

// Each subcommand's numeric options ("FLOAT", "INT" or "UINT" in its --help), as
// {subcommand words, option}: what `attnprof --help` and each subcommand's --help list.
std::vector<std::pair<std::string, std::string>> numeric_options(const fs::path& dir) {
  std::vector<std::string> subs;
  const std::regex sub_line(R"(^  ([a-z]+) +\S.*)"), opt_line(R"(^ +(?:-\w, )?(--[a-z-]+),? .*)"),
      typed(R"((--[a-z-]+)(?:,[^ ]*)? +(FLOAT|INT|UINT)\b)");
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  bool in_subs = false;
  for (const auto& l : lines(attnprof(dir, "--help").out)) {
    if (l.starts_with("Subcommands:")) in_subs = true;
    std::smatch m;
    if (in_subs && std::regex_match(l, m, sub_line)) subs.push_back(m[1]);
  }
  subs.push_back("baseline update");  // a subcommand's own subcommand
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& sub : subs)
    for (const auto& l : lines(attnprof(dir, sub + " --help").out)) {
      std::smatch m;
      if (std::regex_search(l, m, typed)) out.emplace_back(sub, m[1]);
    }
  return out;
}

}  // namespace

TEST_SUITE("cli.bounds") {
  TEST_CASE("every numeric option of every subcommand: nan, inf, -1 refused, exit 2 naming it") {
    TempDir d;
    const auto options = numeric_options(d.path);
    // The ones the bound has to cover, from four subcommands: the list is not empty by accident.
    std::set<std::string> seen;
    for (const auto& [sub, opt] : options) seen.insert(sub + " " + opt);
    for (const char* want : {"ab --batch-ms", "ab --budget-scale", "prune --older-than",
                             "changes --p", "run --threads", "show --rows"})
      CHECK_MESSAGE(seen.count(want) == 1, want);
    for (const auto& [sub, opt] : options)
      for (const std::string v : {"nan", "inf", "-1"}) {
        CAPTURE(sub);
        CAPTURE(opt);
        CAPTURE(v);
        Result r = attnprof(d.path, sub + " --db h.db " + opt + "=" + v);
        INFO(r.out);
        CHECK(r.rc == 2);
        CHECK(r.out.find(opt + ": must be ") != std::string::npos);
        CHECK(r.out.find(", got " + v) != std::string::npos);
      }
    CHECK_FALSE(fs::exists(d.path / "h.db"));
  }

  TEST_CASE("ab's gate options: --batch-ms nan, inf, 1e308, 0 and --budget-scale -1, 0, nan") {
    TempDir d;
    const std::string batch = "--batch-ms: must be a number above 0 and at most 10000 (10 s), got ";
    const std::string scale = "--budget-scale: must be a number above 0 and at most 100, got ";
    for (const auto& [arg, want] : std::vector<std::pair<std::string, std::string>>{
             {"--batch-ms nan", batch + "nan"},
             {"--batch-ms inf", batch + "inf"},
             {"--batch-ms 1e308", batch + "1e308"},
             {"--batch-ms 0", batch + "0"},
             {"--budget-scale=-1", scale + "-1"},
             {"--budget-scale 0", scale + "0"},
             {"--budget-scale nan", scale + "nan"},
             {"--max-rounds 4",
              "--max-rounds: must be a whole number at least 5 and at most "
              "10000, got 4 (a pair of workers needs that many rounds for its "
              "own estimate)"},
             {"--time-limit 1e9",
              "--time-limit: must be a number of seconds at least 0 and at "
              "most 604800 (a week), got 1e9"}}) {
      CAPTURE(arg);
      Result r = attnprof(d.path, "ab --db h.db " + arg);
      INFO(r.out);
      CHECK(r.rc == 2);
      CHECK(r.out.find(want + "\n") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(d.path / "h.db"));
  }

  TEST_CASE("prune --older-than: negative or past the clock's range refused, before the history") {
    TempDir d;
    for (const std::string v : {"-1", "1e6"}) {
      CAPTURE(v);
      Result r = attnprof(d.path, std::string("prune --db h.db --older-than=") + v);
      INFO(r.out);
      CHECK(r.rc == 2);
      CHECK(r.out.find(std::string("--older-than: must be a number of days at least 0 and at most "
                                   "106751 (the clock's range), got ") +
                       v + "\n") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(d.path / "h.db"));
  }

  TEST_CASE("--since and --until: too many days, past the clock, no such date: exit 2 naming it") {
    TempDir d;
    for (const auto& [arg, want] : std::vector<std::pair<std::string, std::string>>{
             {"--since 99999999999999999999d",
              "--since: \"99999999999999999999d\" is more days than the clock spans (at most "
              "106751d)"},
             {"--since 106752d", "--since: \"106752d\" is more days than the clock spans"},
             {"--since 2262-04-12",
              "--since: \"2262-04-12\" is past the clock's range "
              "(1677-09-21T00:12:44Z to 2262-04-11T23:47:16Z)"},
             {"--until 2262-04-11", "--until: \"2262-04-11\" is past the clock's range"},
             {"--since 1677-09-20", "--since: \"1677-09-20\" is past the clock's range"},
             {"--since 2026-02-30", "--since: \"2026-02-30\": no such date"},
             {"--until 2025-02-29T10:00", "--until: \"2025-02-29T10:00\": no such date"},
             {"--since 2026-01-01T24:00", "--since: \"2026-01-01T24:00\": no such time of day"},
             {"--since yesterday",
              "--since: \"yesterday\" is not a date (YYYY-MM-DD, "
              "YYYY-MM-DDTHH:MM[:SS][Z]) or Nd"}}) {
      for (const std::string cmd : {"history", "export", "changes"}) {
        CAPTURE(arg);
        CAPTURE(cmd);
        Result r = attnprof(d.path, std::string(cmd) + " --db h.db " + arg);
        INFO(r.out);
        CHECK(r.rc == 2);
        CHECK(r.out.find(want) != std::string::npos);
      }
    }
    CHECK_FALSE(fs::exists(d.path / "h.db"));
    // The edges the clock holds, and a leap day, are dates: read from an empty history.
    REQUIRE(attnprof(d.path, "prune --db h.db --keep-last 1").rc == 0);
    for (const std::string arg :
         {"--since 2262-04-11", "--until 2262-04-10", "--since 1677-09-22",
          "--since 2024-02-29T23:59:59Z", "--since 106751d", "--since 7d"}) {
      CAPTURE(arg);
      Result r = attnprof(d.path, std::string("history --db h.db ") + arg);
      INFO(r.out);
      CHECK(r.rc == 0);
    }
  }

  TEST_CASE("--case-timeout inf, 1e10, 0, -1 or nan: exit 2 naming it, before anything runs") {
    TempDir d;
    for (const std::string v : {"inf", "1e10", "0", "-1", "nan"}) {
      for (const std::string cmd : {"run", "ab"}) {
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
    for (const std::string v : {"100000", "0", "-5"}) {
      CAPTURE(v);
      const std::string want = "--threads: must be a whole number at least 1 and at most " +
                               std::to_string(4 * cpus) + " (4 x the " + std::to_string(cpus) +
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
