// attnprof's end of the worker protocol against a stand-in worker (tests/data/workers/
// fake-worker) that misbehaves on request: every way a worker goes wrong is an error that says
// what happened, never a crash or a hang of attnprof.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>

#include "harness/util/error.h"
#include "harness/worker/client.h"

using namespace attnprof;
using namespace std::chrono_literals;

namespace {

const std::string fake = std::string(ATTNPROF_TEST_DATA) + "/workers/fake-worker";

worker::Spawn spawn(std::vector<std::string> args = {}) {
  return {fake, std::move(args), "worker"};
}

std::string start_error(std::vector<std::string> args, std::chrono::milliseconds timeout = 5s) {
  try {
    worker::Client c(spawn(std::move(args)), timeout);
  } catch (const util::EnvironmentError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_SUITE("worker::Client") {
  TEST_CASE("a worker of another protocol version is refused, naming both versions") {
    CHECK(start_error({"--mode=v99"}) ==
          fake +
              " speaks worker protocol 99 (build 9.9.9), this attnprof speaks protocol 1 (build "
              "0.1.0); build both from one checkout");
  }

  TEST_CASE("an executable that is no worker is refused with what it said") {
    CHECK(start_error({"--mode=stranger"}) ==
          fake + " is not an attnprof worker: its first line was \"hello world\"");
  }

  TEST_CASE("a worker that dies at start is reported with its exit status and last words") {
    CHECK(start_error({"--mode=die-at-start"}) ==
          fake +
              " failed to start: worker died, exited with status 3; its last output: \"cannot "
              "load plugin: libfoo.so: no such file\"");
  }

  TEST_CASE("a worker that never says hello is killed at the start deadline") {
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(start_error({"--mode=silent"}, 300ms) ==
          fake + " failed to start: worker hung: no answer in time; killed");
    CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  }

  TEST_CASE("requests get their replies, and stderr is kept for later") {
    worker::Client c(spawn());
    auto r = c.call({{"op", "run"}, {"case", {{"key", "a/b"}}}}, 5s);
    CHECK(r["result"]["spec"]["key"] == "a/b");
    auto r2 = c.call({{"op", "describe"}}, 5s);
    CHECK(r2["kernels"][0] == "sdpa.math");
    CHECK_THROWS_AS(c.call({{"op", "nonsense"}}, 5s), worker::RemoteError);
    CHECK(c.alive());  // an ok:false answer is the request's failure, not the worker's
  }

  TEST_CASE("a worker killed by a signal mid-request: the signal and its last output") {
    worker::Client c(spawn());
    try {
      c.call({{"op", "run"}, {"case", {{"key", "crash-me"}}}}, 5s);
      FAIL("no failure");
    } catch (const worker::Failure& f) {
      CHECK(f.kind() == worker::Failure::Kind::died);
      CHECK(std::string(f.what()) ==
            "worker died, signal 11 (SIGSEGV); its last output: \"about to crash\"");
    }
    CHECK_FALSE(c.alive());
    CHECK_THROWS_AS(c.call({{"op", "describe"}}, 1s), worker::Failure);
  }

  TEST_CASE("a worker that does not answer in time is killed") {
    worker::Client c(spawn());
    const pid_t pid = c.pid();
    const auto t0 = std::chrono::steady_clock::now();
    try {
      c.call({{"op", "run"}, {"case", {{"key", "hang-me"}}}}, 300ms);
      FAIL("no failure");
    } catch (const worker::Failure& f) {
      CHECK(f.kind() == worker::Failure::Kind::hung);
      CHECK(std::string(f.what()) == "worker hung: no answer in time; killed");
    }
    CHECK(std::chrono::steady_clock::now() - t0 < 5s);
    CHECK(::kill(pid, 0) != 0);  // gone and reaped
  }

  TEST_CASE("malformed replies break the protocol, and the worker is retired") {
    {
      worker::Client c(spawn());
      try {
        c.call({{"op", "garbage-me"}}, 5s);
        FAIL("no failure");
      } catch (const worker::Failure& f) {
        CHECK(f.kind() == worker::Failure::Kind::protocol);
        CHECK(std::string(f.what()) ==
              "worker broke the protocol: its reply is not JSON: \"this is not json\"");
      }
      CHECK_FALSE(c.alive());
    }
    worker::Client c(spawn());
    try {
      c.call({{"op", "wrong-id-me"}}, 5s);
      FAIL("no failure");
    } catch (const worker::Failure& f) {
      CHECK(std::string(f.what()) == "worker broke the protocol: reply to request 1 has id 999999");
    }
  }

  TEST_CASE("resolve_worker takes an executable or a folder holding attnprof-worker") {
    CHECK(worker::resolve_worker(fake, "--base") == fake);
    try {
      worker::resolve_worker(ATTNPROF_TEST_DATA, "--base");
      FAIL("no error");
    } catch (const util::InputError& e) {
      CHECK(e.diagnostics().at(0).to_string() ==
            "--base: " + std::string(ATTNPROF_TEST_DATA) +
                ": this folder holds no attnprof-worker executable (build it: cmake --build " +
                ATTNPROF_TEST_DATA + " --target attnprof-worker)");
    }
    CHECK_THROWS_AS(worker::resolve_worker("/no/such/worker", "--head"), util::InputError);
  }
}
