// attnprof's end of the worker protocol against a stand-in worker (tests/data/workers/
// fake-worker) that misbehaves on request: every way a worker goes wrong is an error that says
// what happened, never a crash or a hang of attnprof.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

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

// How a worker ends when the process that started it is killed with SIGKILL, as CI's timeout or
// a user's kill -9 ends attnprof: "killed by signal N" or "exited with status N". Three
// processes: a reaper (PR_SET_CHILD_SUBREAPER, so the orphaned worker becomes its child and
// its end can be read), under it the parent, which starts a worker that reads no request (busy
// in a case) and is then killed. Once the parent is reaped the reaper sends the worker SIGTERM:
// a worker the parent's death already killed ends by SIGKILL, one that outlived it by SIGTERM.
// Decided by the order of events, not by how fast anything ran.
std::string worker_end_when_parent_killed() {
  int out[2];
  REQUIRE(pipe(out) == 0);
  const pid_t reaper = fork();
  REQUIRE(reaper >= 0);
  if (reaper == 0) {
    close(out[0]);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int ready[2];
    if (pipe(ready) != 0) _exit(20);
    const pid_t parent = fork();
    if (parent == 0) {
      close(ready[0]);
      try {
        worker::Client c(spawn({"--mode=deaf"}), 10s);
        const pid_t w = c.pid();
        (void)!write(ready[1], &w, sizeof w);
        pause();
      } catch (...) {
      }
      _exit(21);
    }
    close(ready[1]);
    pid_t w = -1;
    std::string said;
    if (read(ready[0], &w, sizeof w) != sizeof w || w <= 0) {
      w = -1;
      said = "the parent could not start its worker";
    } else {
      kill(parent, SIGKILL);
      waitpid(parent, nullptr, 0);
      kill(w, SIGTERM);
      int status = 0;
      waitpid(w, &status, 0);
      said = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                 : "exited with status " + std::to_string(WEXITSTATUS(status));
    }
    if (w > 0) kill(-w, SIGKILL);  // what the worker started (its sleep), its process group
    while (waitpid(-1, nullptr, 0) > 0) {
    }
    (void)!write(out[1], said.data(), said.size());
    _exit(0);
  }
  close(out[1]);
  std::string said;
  char buf[128];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) said.append(buf, n);
  close(out[0]);
  waitpid(reaper, nullptr, 0);
  return said;
}

}  // namespace

TEST_SUITE("worker::Client") {
  TEST_CASE("a worker ends with the attnprof that started it, killed or not, busy or not") {
    CHECK(worker_end_when_parent_killed() == "killed by signal 9");
  }

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
