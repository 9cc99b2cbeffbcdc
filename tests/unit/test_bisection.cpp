// bisect::Bisection and bisect::judge_step: the order of a bisect's steps, the commit it names
// wherever the first bad one is, where it stops, and what one step's verdicts make of it.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>

#include "harness/bisect/bisection.h"
#include "harness/util/error.h"

using namespace attnprof;
using bisect::Bisection;
using bisect::Side;

namespace {

std::vector<std::string> commits(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(fmt::format("c{}", i));
  return out;
}

gate::CaseVerdict verdict(const std::string& key, gate::Verdict v, double ratio) {
  gate::CaseVerdict c;
  c.key = key;
  c.verdict = v;
  c.ratio = ratio;
  c.ci_low = ratio * 0.98;
  c.ci_high = ratio * 1.02;
  c.tolerance = 0.05;
  return c;
}

}  // namespace

TEST_SUITE("bisect::bisection") {
  TEST_CASE("the bad commit first, then halves, and the first bad commit named wherever it is") {
    for (int n = 2; n <= 12; ++n)
      for (int first_bad = 1; first_bad < n; ++first_bad) {
        Bisection b(commits(n));
        std::vector<std::size_t> order;
        while (auto i = b.next()) {
          order.push_back(*i);
          b.record(*i, static_cast<int>(*i) >= first_bad ? Side::bad : Side::good);
        }
        CAPTURE(n);
        CAPTURE(first_bad);
        REQUIRE(b.state() == Bisection::State::found);
        CHECK(b.first_bad() == fmt::format("c{}", first_bad));
        CHECK(b.last_good() == fmt::format("c{}", first_bad - 1));
        CHECK(order.front() == static_cast<std::size_t>(n - 1));
        // One step for the bad commit, then at most ceil(log2(n - 1)).
        CHECK(order.size() <= 1 + static_cast<std::size_t>(std::ceil(std::log2(n - 1))));
      }
    // Seven commits after the good one, the fifth of them bad: c7, then c3, c5, c4.
    Bisection b(commits(8));
    CHECK(b.steps_left() == 4);
    std::vector<std::size_t> order;
    while (auto i = b.next()) {
      order.push_back(*i);
      b.record(*i, *i >= 5 ? Side::bad : Side::good);
    }
    CHECK(order == std::vector<std::size_t>{7, 3, 5, 4});
    CHECK(b.first_bad() == "c5");
  }

  TEST_CASE("an inconclusive step stops the search with the commits that remain") {
    Bisection b(commits(8));
    b.record(7, Side::bad);
    b.record(3, Side::good);
    CHECK(b.remaining() == std::vector<std::string>{"c4", "c5", "c6", "c7"});
    CHECK(b.steps_left() == 2);
    b.record(5, Side::inconclusive);
    CHECK(b.state() == Bisection::State::stopped);
    CHECK_FALSE(b.next().has_value());
    CHECK(b.last_good() == "c3");
    CHECK(b.first_bad() == "c7");
    CHECK(b.remaining() == std::vector<std::string>{"c4", "c5", "c6", "c7"});
  }

  TEST_CASE("a bad commit that is not slower ends the bisect before any other step") {
    Bisection b(commits(5));
    b.record(4, Side::good);
    CHECK(b.state() == Bisection::State::not_slower);
    CHECK_FALSE(b.next().has_value());
    Bisection unsure(commits(5));
    unsure.record(4, Side::inconclusive);
    CHECK(unsure.state() == Bisection::State::stopped);
    CHECK(unsure.remaining().size() == 4);
  }

  TEST_CASE("a range without a commit after the good one is bad input") {
    try {
      Bisection b(commits(1));
      FAIL("no error");
    } catch (const util::InputError& e) {
      CHECK(e.diagnostics().at(0).to_string() ==
            "--bad: the range needs a good commit and a later bad one");
    }
  }

  TEST_CASE("a step out of turn is refused") {
    Bisection b(commits(5));
    CHECK_THROWS_AS(b.record(2, Side::bad), std::logic_error);
  }

  TEST_CASE("a step is bad on any regression, good when every case held, else it cannot tell") {
    using V = gate::Verdict;
    auto j =
        bisect::judge_step({verdict("a", V::unchanged, 1.01), verdict("b", V::regression, 1.4),
                            verdict("c", V::regression, 2.1), verdict("d", V::inconclusive, 1.0)});
    CHECK(j.side == Side::bad);
    CHECK(j.decisive.key == "c");
    CHECK(j.why == "regression of c");

    j = bisect::judge_step({verdict("a", V::unchanged, 1.01), verdict("b", V::improvement, 0.7)});
    CHECK(j.side == Side::good);
    CHECK(j.decisive.key == "a");
    CHECK(j.why == "every case unchanged or faster");
    CHECK(bisect::judge_step({verdict("a", V::unchanged, 1.01)}).why == "a unchanged");

    auto unsure = verdict("b", V::inconclusive, 1.04);
    unsure.reason = "3 more pairs of workers would settle it";
    j = bisect::judge_step({verdict("a", V::unchanged, 1.0), unsure});
    CHECK(j.side == Side::inconclusive);
    CHECK(j.why == "b inconclusive: 3 more pairs of workers would settle it");

    // An accepted regression is still the regression bisect looks for; a failed case tells
    // nothing about speed.
    CHECK(bisect::judge_step({verdict("a", V::accepted, 1.5)}).side == Side::bad);
    CHECK(bisect::judge_step({verdict("a", V::failed, 0)}).side == Side::inconclusive);
    CHECK(bisect::judge_step({}).why == "no case was measured");
  }
}
