// The supervisor turns a worker's death into the case's error and carries on with a fresh
// worker: a crashing kernel costs one case, never the run.
#include <doctest/doctest.h>

#include "harness/util/error.h"
#include "harness/worker/supervisor.h"

using namespace attnprof;
using namespace std::chrono_literals;

namespace {

const std::string fake = std::string(ATTNPROF_TEST_DATA) + "/workers/fake-worker";

core::Case make(const std::string& key) {
  core::Case c;
  c.key = key;
  c.kernel = "sdpa.math";
  return c;
}

}  // namespace

TEST_SUITE("worker::Supervisor") {
  TEST_CASE("a crash ends that case with the signal; the next case gets a fresh worker") {
    worker::Supervisor s({fake, {}, "worker"});
    CHECK(s.described().kernels == std::vector<std::string>{"sdpa.math"});
    CHECK(s.described().env.cpu_model == "fake");
    core::CaseResult a = s.run_case(make("x/crash-me"), true, 5s);
    CHECK(a.status == core::CaseStatus::error);
    CHECK(a.spec.key == "x/crash-me");
    CHECK(a.message == "worker died, signal 11 (SIGSEGV); its last output: \"about to crash\"");
    core::CaseResult b = s.run_case(make("x/fine"), true, 5s);
    CHECK(b.status == core::CaseStatus::ok);
    CHECK(b.spec.key == "x/fine");
    CHECK(s.starts() == 2);
    const auto err = s.take_stderr();
    REQUIRE(err.size() == 1);
    CHECK(err[0] == "about to crash");
  }

  TEST_CASE("a hang past the deadline ends the case as hung") {
    worker::Supervisor s({fake, {}, "worker"});
    core::CaseResult a = s.run_case(make("x/hang-me"), true, 300ms);
    CHECK(a.status == core::CaseStatus::error);
    CHECK(a.message == "worker hung: no answer in time; killed");
    CHECK(s.run_case(make("x/next"), true, 5s).status == core::CaseStatus::ok);
  }

  TEST_CASE("a worker that cannot start ends the command (exit 3)") {
    worker::Supervisor s({fake, {"--mode=die-at-start"}, "worker"});
    CHECK_THROWS_AS(s.described(), util::EnvironmentError);
  }

  TEST_CASE("case_timeout: three times the case's budget plus a minute, or the override") {
    core::Case c = make("k");
    c.measure.warmup_ms = 200;
    c.measure.time_budget_s = 10;
    CHECK(worker::case_timeout(c).count() == 60'000 + 3 * 10'200);
    CHECK(worker::case_timeout(c, 2.5).count() == 2500);
  }
}
