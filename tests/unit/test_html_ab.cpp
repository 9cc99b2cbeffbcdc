// report::html's A/B drawings (html_ab.h): rounds grouped by the pair of workers that measured
// them, each pair's estimate beside the pooled interval, memory tables left out when all zero.
#include <doctest/doctest.h>

#include <cmath>

#include "harness/report/html.h"
#include "harness/report/html_ab.h"
#include "report_fixtures.h"

using namespace attnprof;

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// `n` rounds of pair `pass`, head/base = `ratio` give or take 0.5%, base first in even rounds.
std::vector<core::AbRound> pair_rounds(int pass, int n, double ratio) {
  std::vector<core::AbRound> out;
  for (int i = 0; i < n; ++i) {
    core::AbRound r;
    r.pass = pass;
    r.round = i;
    r.base_first = i % 2 == 0;
    r.base_ns = 1000;
    r.head_ns = 1000 * ratio * (1 + 0.005 * ((i % 3) - 1));
    out.push_back(r);
  }
  return out;
}

report::AbCase three_pairs() {
  report::AbCase ab;
  ab.key = "m/prefill/b1/cpu.naive";
  // Stored as the session wrote them: pair by pair, here out of order.
  for (auto [pass, ratio] : {std::pair{1, 1.20}, {0, 1.10}, {2, 1.15}})
    for (auto& r : pair_rounds(pass, 6, ratio)) ab.rounds.push_back(r);
  return ab;
}

gate::CaseVerdict pooled(double ratio, double low, double high) {
  gate::CaseVerdict v =
      testing::verdict("m/prefill/b1/cpu.naive", gate::Verdict::regression, ratio);
  v.ci_low = low;
  v.ci_high = high;
  v.tolerance = 0.05;
  return v;
}

}  // namespace

TEST_SUITE("report::html_ab") {
  TEST_CASE("the rounds are drawn pair by pair, each pair's span labelled") {
    const std::string svg = report::html::ab_rounds_svg(three_pairs(), 0.05);
    CHECK(count(svg, "class=\"pair-span\"") == 3);
    CHECK(count(svg, "class=\"point\"") == 18);
    CHECK(svg.find("of 3 pair(s) of workers") != std::string::npos);
    // In pass order whatever the stored order, every other span shaded.
    const auto p1 = svg.find(">pair 1</text>"), p2 = svg.find(">pair 2</text>"),
               p3 = svg.find(">pair 3</text>");
    REQUIRE(p3 != std::string::npos);
    CHECK(p1 < p2);
    CHECK(p2 < p3);
    CHECK(svg.find("<title>pair 1, round 1:") < svg.find("<title>pair 2, round 1:"));
    CHECK(count(svg, "fill=\"#f6f8fa\"><title>pair 2 of workers: 6 round(s)") == 1);
    CHECK(count(svg, "fill=\"none\"><title>pair 1 of workers") == 1);
  }

  TEST_CASE("each pair's estimate is drawn beside the pooled estimate and interval") {
    const std::string svg = report::html::ab_pairs_svg(three_pairs(), pooled(1.15, 1.05, 1.26));
    CHECK(count(svg, "<g class=\"pair\">") == 3);
    // Each pair's Hodges-Lehmann estimate of its rounds, in pass order.
    const auto a = svg.find("<title>pair 1: 1.1000x"), b = svg.find("<title>pair 2: 1.2000x"),
               c = svg.find("<title>pair 3: 1.1500x");
    REQUIRE(c != std::string::npos);
    CHECK(a < b);
    CHECK(b < c);
    CHECK(svg.find("over 6 rounds</title>") != std::string::npos);
    CHECK(svg.find("<title>pooled interval [1.0500, 1.2600]</title>") != std::string::npos);
    CHECK(svg.find("<title>pooled estimate 1.1500x</title>") != std::string::npos);
    CHECK(svg.find("pooled: 1.1500x [1.0500, 1.2600]") != std::string::npos);  // the legend
    CHECK(count(svg, "class=\"tolerance\"") == 2);
  }

  TEST_CASE("a pair with too few rounds has no estimate; no estimate at all, no chart") {
    report::AbCase ab = three_pairs();
    for (auto& r : pair_rounds(3, 3, 1.5)) ab.rounds.push_back(r);
    CHECK(count(report::html::ab_pairs_svg(ab, pooled(1.15, 1.05, 1.26)), "<g class=\"pair\">") ==
          3);
    ab.rounds = pair_rounds(0, 4, 1.1);
    CHECK(report::html::ab_pairs_svg(ab, pooled(1.1, 1.0, 1.2)) == "");
    // Fewer than two pairs: no pooled interval (NaN), the pair still drawn.
    ab.rounds = pair_rounds(0, 6, 1.1);
    const std::string one = report::html::ab_pairs_svg(ab, pooled(1.1, NAN, NAN));
    CHECK(count(one, "<g class=\"pair\">") == 1);
    CHECK(one.find("class=\"pooled\"") == std::string::npos);
  }

  TEST_CASE("a memory table whose figures are all zero is left out") {
    using report::MemoryDiff;
    CHECK(report::html::ab_memory_table({}) == "");
    CHECK(report::html::ab_memory_table({{"memory.rss_growth_bytes", 0, 0, false},
                                         {"memory.minor_faults_per_call", 0, 0, false}}) == "");
    const std::string t = report::html::ab_memory_table(
        {{"memory.rss_growth_bytes", 0, 0, false}, {"memory.minor_faults_per_call", 0, 3, true}});
    CHECK(t.find("<p>Memory over the measured calls:</p>") == 0);
    CHECK(t.find("<td>memory.minor_faults_per_call</td>") != std::string::npos);
    CHECK(t.find("<td>memory.rss_growth_bytes</td>") != std::string::npos);

    // On the page: the case with only zeros has no memory table, the other one has.
    report::GateReport r = testing::sample_report();
    r.mode = "ab";
    r.ab = report::AbDetail{};
    for (int i : {0, 1}) {
      report::AbCase c = three_pairs();
      c.key = r.verdicts[i].key;
      c.memory = {{"memory.rss_growth_bytes", 0, i == 1 ? 4096.0 : 0.0, false}};
      r.ab->cases.push_back(c);
    }
    const std::string html = report::html_gate(r);
    CHECK(count(html, "Memory over the measured calls") == 1);
    CHECK(count(html, "class=\"pair-span\"") == 6);
    CHECK(count(html, "<g class=\"pair\">") == 6);
  }
}
