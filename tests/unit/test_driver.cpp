// attnprof ab's interleaving, against two stand-in workers that report fixed times.
#include <doctest/doctest.h>

#include "harness/ab/driver.h"

using namespace attnprof;

namespace {

const std::string fake = std::string(ATTNPROF_TEST_DATA) + "/workers/fake-worker";

}  // namespace

TEST_SUITE("ab::run_case") {
  TEST_CASE("rounds pair each side's batch median, in balanced random order") {
    worker::Supervisor base({fake, {"--ns=1000"}, "base"});
    worker::Supervisor head({fake, {"--ns=1100"}, "head"});
    core::Case c;
    c.key = "m/w/s/sdpa.math";
    c.kernel = "sdpa.math";
    ab::Options o;
    o.batch_ms = 1;
    o.max_rounds = 40;
    int looked = 0;
    o.decided = [&](const std::vector<store::AbRound>& rounds, const core::Case&) {
      ++looked;
      return rounds.size() == 32;
    };
    ab::CaseOutcome out = ab::run_case(base, head, c, o);
    CHECK(out.stop_reason == "decided");
    REQUIRE(out.rounds.size() == 32);
    CHECK(looked == 32);
    int base_first = 0;
    for (std::size_t i = 0; i < out.rounds.size(); ++i) {
      const auto& r = out.rounds[i];
      CHECK(r.round == static_cast<int>(i));
      CHECK(r.base_ns == 1000);
      CHECK(r.head_ns == 1100);
      CHECK(r.base_n == 2);
      base_first += r.base_first;
      // ABBA: rounds 2k and 2k+1 run in opposite orders.
      if (i % 2 == 1) CHECK(r.base_first != out.rounds[i - 1].base_first);
    }
    CHECK(base_first == 16);
    CHECK(out.base.status == core::CaseStatus::ok);
    CHECK(out.head.spec.key == c.key);
  }

  TEST_CASE("a side that dies ends the case there, with its reason") {
    worker::Supervisor base({fake, {}, "base"});
    worker::Supervisor head({fake, {}, "head"});
    core::Case c;
    c.key = "m/crash-me/s/k";
    c.kernel = "sdpa.math";
    ab::CaseOutcome out = ab::run_case(base, head, c, {});
    CHECK(out.rounds.empty());
    CHECK(out.stop_reason == "not measured on both sides");
    const bool either = out.base.message.find("died, signal 11") != std::string::npos ||
                        out.head.message.find("died, signal 11") != std::string::npos;
    CHECK(either);
  }
}
