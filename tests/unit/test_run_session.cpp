// attnprof run's session (harness/session/run_session.h) against a stand-in worker
// (tests/data/workers/fake-worker): what is stored as cases finish, and how a run stops.
#include <doctest/doctest.h>

#include "harness/session/run_session.h"
#include "store_fixtures.h"

using namespace attnprof;

namespace {

const std::string fake = std::string(ATTNPROF_TEST_DATA) + "/workers/fake-worker";

core::Case make(const std::string& key) {
  core::Case c;
  c.key = key;
  c.kernel = "sdpa.math";
  return c;
}

struct Fixture {
  testing::TempDir dir;
  store::Database db = store::Database::open(dir.file("run.db"));
  worker::Supervisor sup{{fake, {}, "worker"}};
  std::vector<core::Case> cases{make("x/first"), make("x/share-gpu-me"), make("x/third")};

  session::OpenRun begin() {
    core::Run fresh;
    fresh.git_commit = "abc";
    return session::begin_run(db, std::move(fresh), sup.described().env, cases.front());
  }
};

}  // namespace

TEST_SUITE("session::run_cases") {
  TEST_CASE("--require-idle-gpu: a case refused for a shared GPU stops the run, resumable") {
    Fixture f;
    session::CaseOptions o;
    o.stop_when_gpu_shared = true;
    const core::Run run = session::run_cases(f.db, f.sup, f.begin(), f.cases, o);
    CHECK(run.status == "incomplete");
    // The case before is stored; the refused one and the one after are not run or stored.
    REQUIRE(run.cases.size() == 1);
    CHECK(run.cases[0].spec.key == "x/first");
    CHECK(session::run_exit_code(run) == util::exit_environment);
    const auto stored = f.db.load_run(run.id);
    REQUIRE(stored);
    CHECK(stored->status == "incomplete");
    REQUIRE(stored->cases.size() == 1);

    // --resume runs the refused case and the rest: here the GPU is idle again.
    std::vector<core::Case> rest = f.cases;
    session::OpenRun open = session::resume_run(f.db, "latest", rest);
    REQUIRE(rest.size() == 2);
    CHECK(rest[0].key == "x/share-gpu-me");
    rest[0].key = "x/second";  // the stand-in refuses by key: now it runs
    const core::Run resumed =
        session::run_cases(f.db, f.sup, std::move(open), rest, session::CaseOptions{});
    CHECK(resumed.status == "complete");
    CHECK(resumed.cases.size() == 3);
    CHECK(session::run_exit_code(resumed) == util::exit_pass);
  }

  TEST_CASE("without --require-idle-gpu the same answer is one case's error; the run goes on") {
    Fixture f;
    const core::Run run = session::run_cases(f.db, f.sup, f.begin(), f.cases, {});
    CHECK(run.status == "complete");
    REQUIRE(run.cases.size() == 3);
    CHECK(run.cases[1].status == core::CaseStatus::error);
    CHECK(run.cases[1].message.find("the GPU is shared with pid 4242") == 0);
    CHECK(run.cases[2].status == core::CaseStatus::ok);
    CHECK(session::run_exit_code(run) == util::exit_environment);
  }
}
