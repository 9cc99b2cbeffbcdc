// attnprof ab's interleaving and its session of pairs of workers, against stand-in workers
// that report fixed times.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "harness/ab/driver.h"
#include "harness/ab/session.h"
#include "harness/util/machine.h"
#include "store_fixtures.h"

using namespace attnprof;

namespace {

const std::string fake = std::string(ATTNPROF_TEST_DATA) + "/workers/fake-worker";

}  // namespace

TEST_SUITE("ab::run_case") {
  TEST_CASE("rounds pair each side's batch median and lower quartile, in balanced random order") {
    // Each batch: calls at --ns/2 and --ns, three at --slow (calls that shared a CPU, say).
    worker::Supervisor base({fake, {"--ns=1000", "--slow=1500"}, "base"});
    worker::Supervisor head({fake, {"--ns=1100", "--slow=2000"}, "head"});
    core::Case c;
    c.key = "m/w/s/sdpa.math";
    c.kernel = "sdpa.math";
    ab::Options o;
    o.batch_ms = 1;
    o.max_rounds = 40;
    int looked = 0;
    o.decided = [&](const std::vector<core::AbRound>& rounds, const core::Case&) {
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
      CHECK(r.base_ns == 1500);
      CHECK(r.head_ns == 2000);
      CHECK(r.base_q1_ns == 1000);
      CHECK(r.head_q1_ns == 1100);
      CHECK(r.base_n == 5);
      base_first += r.base_first;
      // ABBA: rounds 2k and 2k+1 run in opposite orders.
      if (i % 2 == 1) CHECK(r.base_first != out.rounds[i - 1].base_first);
    }
    CHECK(base_first == 16);
    CHECK(out.base.status == core::CaseStatus::ok);
    CHECK(out.head.spec.key == c.key);
  }

  TEST_CASE("rounds carry each side's median SM clock where its samples read one") {
    auto rounds = [](std::vector<std::string> base_args, std::vector<std::string> head_args) {
      worker::Supervisor base({fake, std::move(base_args), "base"});
      worker::Supervisor head({fake, std::move(head_args), "head"});
      core::Case c;
      c.key = "m/w/s/sdpa.math";
      c.kernel = "sdpa.math";
      ab::Options o;
      o.batch_ms = 1;
      o.max_rounds = 4;
      o.decided = [](const std::vector<core::AbRound>& r, const core::Case&) {
        return r.size() == 4;
      };
      return ab::run_case(base, head, c, o).rounds;
    };
    const auto gpu = rounds({"--ns=1000", "--clock=1980"}, {"--ns=1100", "--clock=1410"});
    REQUIRE(gpu.size() == 4);
    for (const auto& r : gpu) {
      CHECK(r.base_clock_mhz == 1980);
      CHECK(r.head_clock_mhz == 1410);
    }
    // Samples without a clock (the CPU, a GPU without NVML): 0, not read.
    const auto cpu = rounds({"--ns=1000"}, {"--ns=1100", "--clock=1410"});
    REQUIRE(cpu.size() == 4);
    CHECK(cpu[0].base_clock_mhz == 0);
    CHECK(cpu[0].head_clock_mhz == 1410);
  }

  // The order comes from the seed, an FNV-1a hash of the key (core/hash.h) and the pair: stored
  // rounds can be told from their seed, so it is pinned.
  TEST_CASE("a case's round order is fixed by the seed, its key and the pair of workers") {
    auto order = [](const std::string& key, int pass) {
      worker::Supervisor base({fake, {"--ns=1000"}, "base"});
      worker::Supervisor head({fake, {"--ns=1100"}, "head"});
      core::Case c;
      c.key = key;
      c.kernel = "sdpa.math";
      ab::Options o;
      o.batch_ms = 1;
      o.max_rounds = 12;
      o.pass = pass;
      o.decided = [](const std::vector<core::AbRound>& rounds, const core::Case&) {
        return rounds.size() == 12;
      };
      std::string text;
      for (const auto& r : ab::run_case(base, head, c, o).rounds) text += r.base_first ? 'B' : 'H';
      return text;
    };
    CHECK(order("m/w/s/sdpa.math", 0) == "BHHBHBHBHBHB");
    CHECK(order("m/w/s/sdpa.math", 1) == "HBBHBHHBBHBH");
    CHECK(order("m/w/s/eager", 0) == "HBHBBHBHHBBH");
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

namespace {

// A session's sink: a history in a temporary folder with the two runs of one A/B pair begun.
struct TempSink {
  testing::TempDir dir;
  store::Database db = store::Database::open(dir.file("ab.db"));
  ab::Sink sink{db, "pair-1", "", ""};
  TempSink() {
    core::Run base = testing::make_run("base", 1), head = testing::make_run("head", 2);
    base.cases.clear();
    head.cases.clear();
    base.pair_id = head.pair_id = "pair-1";
    base.side = "base";
    head.side = "head";
    sink.base_run = db.begin_run(base);
    sink.head_run = db.begin_run(head);
  }
};

core::Case math_case(const std::string& key) {
  core::Case c;
  c.key = key;
  c.kernel = "sdpa.math";
  c.gate.tolerance = 0.02;
  return c;
}

// The CPUs a worker may run on; the worker must be there to be asked (allowed_cpus answers CPU 0
// for a process it cannot read).
std::vector<int> cpus_of(pid_t pid) {
  REQUIRE(std::filesystem::exists("/proc/" + std::to_string(pid)));
  return util::allowed_cpus(pid);
}

// NAME's value in a worker's environment, "" where it has none.
std::string env_of(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ");
  const std::string all{std::istreambuf_iterator<char>(in), {}};
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = std::min(all.find('\0', at), all.size());
    const std::string entry = all.substr(at, end - at);
    if (entry.starts_with(name + "=")) return entry.substr(name.size() + 1);
    at = end + 1;
  }
  return "";
}

ab::SessionOptions few_rounds() {
  ab::SessionOptions o;
  o.rounds.batch_ms = 1;
  o.rounds.max_rounds = 6;
  return o;
}

}  // namespace

TEST_SUITE("ab::Session") {
  TEST_CASE("each case gets fresh pairs of workers until the stop rule settles it, at least 3") {
    TempSink s;
    ab::Session session({fake, {"--ns=1000"}, "base"}, {fake, {"--ns=1100"}, "head"}, few_rounds());
    std::vector<int> pairs;
    ab::Observer watch;
    watch.pair_started = [&](int pair, int cases) {
      pairs.push_back(pair);
      CHECK(cases == 2);
    };
    session.run({math_case("m/w/a/sdpa.math"), math_case("m/w/b/sdpa.math")}, s.sink, watch);
    CHECK(pairs == std::vector<int>{0, 1, 2});
    CHECK(session.pairs_started() == 3);
    const auto rounds = s.db.rounds("pair-1");
    REQUIRE(rounds.size() == 2 * 3 * 6);
    for (int i = 0; i < 18; ++i) {
      CHECK(rounds[i].case_key == "m/w/a/sdpa.math");
      CHECK(rounds[i].round == i);  // numbered on across pairs
      CHECK(rounds[i].pass == i / 6);
    }
    const ab::CaseCourse& a = session.courses().at("m/w/a/sdpa.math");
    CHECK(a.state == "settled");
    CHECK(a.pairs == 3);
    CHECK(a.last.reason.find("3 pairs: 1.100x") == 0);
    CHECK(a.last.reason.find("beyond the 2.0% tolerance") != std::string::npos);
    CHECK(session.pair_seconds().at("m/w/a/sdpa.math") > 0);
    // Pair 0's case results are stored, once per side.
    CHECK(s.db.load_run(s.sink.head_run)->cases.size() == 2);
  }

  TEST_CASE("no pair starts past the time limit: the case is left with what it has") {
    TempSink s;
    ab::SessionOptions o = few_rounds();
    o.time_limit_s = 1e-3;
    ab::Session session({fake, {}, "base"}, {fake, {}, "head"}, o);
    session.run({math_case("m/w/a/sdpa.math")}, s.sink, {});
    CHECK(session.pairs_started() == 1);
    CHECK(session.courses().at("m/w/a/sdpa.math").state == "time limit");
    CHECK(s.db.rounds("pair-1").size() == 6);
  }

  TEST_CASE("a case that cannot be measured on both sides ends in pair 0") {
    TempSink s;
    ab::Session session({fake, {}, "base"}, {fake, {}, "head"}, few_rounds());
    session.run({math_case("m/crash-me/s/k")}, s.sink, {});
    CHECK(session.pairs_started() == 1);
    CHECK(session.courses().at("m/crash-me/s/k").state == "not measured on both sides");
    CHECK(s.db.rounds("pair-1").empty());
  }

  TEST_CASE("both workers of a pair run a case of fewer threads than CPUs on the same CPUs") {
    const std::vector<int> all = util::allowed_cpus();
    if (all.size() < 2) {
      MESSAGE("one CPU allowed here: nothing to share");
      return;
    }
    core::Case one = math_case("m/w/one/sdpa.math");
    one.hardware.threads = 1;
    core::Case every = math_case("m/w/every/sdpa.math");  // threads 0: the physical cores
    {
      TempSink s;
      ab::Session session({fake, {"--ns=1000"}, "base"}, {fake, {"--ns=1100"}, "head"},
                          few_rounds());
      session.run({one}, s.sink, {});
      const std::vector<int> base = cpus_of(session.base().pid());
      CHECK(base.size() == 1);
      CHECK(cpus_of(session.head().pid()) == base);
    }
    {
      // The same pair measures the 1-thread case, then one of every thread: all CPUs again.
      TempSink s;
      ab::Session session({fake, {"--ns=1000"}, "base"}, {fake, {"--ns=1100"}, "head"},
                          few_rounds());
      session.run({one, every}, s.sink, {});
      CHECK(cpus_of(session.base().pid()) == all);
      CHECK(cpus_of(session.head().pid()) == all);
    }
    {
      // --no-shared-cpus: the scheduler's choice, every CPU allowed.
      TempSink s;
      ab::SessionOptions o = few_rounds();
      o.share_cpus = false;
      ab::Session session({fake, {"--ns=1000"}, "base"}, {fake, {"--ns=1100"}, "head"}, o);
      session.run({one}, s.sink, {});
      CHECK(cpus_of(session.base().pid()) == all);
      CHECK(cpus_of(session.head().pid()) == all);
    }
  }

  TEST_CASE("both workers of a pair get one order of the CPUs for their threads, drawn per pair") {
    const std::vector<int> all = util::allowed_cpus();
    auto order_of = [](pid_t pid) {
      std::vector<int> out;
      std::string text = env_of(pid, "ATTNPROF_CPU_ORDER");
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        out.push_back(std::stoi(text.substr(at, comma - at)));
        at = comma + 1;
      }
      return out;
    };
    core::Case c = math_case("m/w/a/sdpa.math");
    std::vector<std::vector<int>> orders;
    for (std::uint64_t seed : {1, 2, 3, 4, 5, 6, 7, 8}) {
      TempSink s;
      ab::SessionOptions o = few_rounds();
      o.seed = seed;
      o.stop.max_pairs = 1;
      o.stop.min_pairs = 1;
      ab::Session session({fake, {"--ns=1000"}, "base"}, {fake, {"--ns=1100"}, "head"}, o);
      session.run({c}, s.sink, {});
      CHECK(session.cpu_placement().find("thread i on the same CPU in both") != std::string::npos);
      const std::vector<int> base = order_of(session.base().pid());
      CHECK(order_of(session.head().pid()) == base);
      std::vector<int> sorted = base;
      std::sort(sorted.begin(), sorted.end());
      CHECK(sorted == all);  // every allowed CPU, once
      orders.push_back(base);
    }
    if (all.size() >= 2)  // 8 draws of an order of 2 or more CPUs: not all the same
      CHECK(std::count(orders.begin(), orders.end(), orders.front()) < 8);
    {
      // --no-shared-cpus: no order.
      TempSink s;
      ab::SessionOptions o = few_rounds();
      o.share_cpus = false;
      ab::Session session({fake, {"--ns=1000"}, "base"}, {fake, {"--ns=1100"}, "head"}, o);
      session.run({c}, s.sink, {});
      CHECK(env_of(session.base().pid(), "ATTNPROF_CPU_ORDER").empty());
      CHECK(env_of(session.head().pid(), "ATTNPROF_CPU_ORDER").empty());
      CHECK(session.cpu_placement().find("the OS gives it (--no-shared-cpus)") !=
            std::string::npos);
    }
    {
      // The user binds OpenMP's threads for a worker: theirs stands, in both.
      TempSink s;
      ab::Session session({fake, {"--ns=1000", "--env", "OMP_PLACES=cores"}, "base"},
                          {fake, {"--ns=1100"}, "head"}, few_rounds());
      session.run({c}, s.sink, {});
      CHECK(env_of(session.base().pid(), "ATTNPROF_CPU_ORDER").empty());
      CHECK(env_of(session.head().pid(), "ATTNPROF_CPU_ORDER").empty());
      CHECK(env_of(session.base().pid(), "OMP_PLACES") == "cores");
      CHECK(session.cpu_placement().find("placed by your OMP_PROC_BIND or OMP_PLACES") !=
            std::string::npos);
    }
  }
}
