// Paired A/B statistics (harness/gate/paired.h) on synthetic sessions from a drifting shared
// machine (tests/unit/paired_simulation.h: a random walk of the machine's speed with sudden
// +-60% steps, 3% sample noise, 2% preempted samples) where every worker process also carries
// a bias of its own for its whole life (layout, page placement, core; `bias` below, the sd of
// one worker's log bias). Two tables, over many seeded sessions:
//
// 1. One fixed design (pairs x rounds), the same numbers judged four ways:
//      two-level      gate::compare_paired: pairs of workers as a level of the statistic
//      rounds only    the signed-rank interval over all rounds pooled, as if one pair of
//                     workers were the population (the statistic attnprof ab used before)
//      unpaired       gate::compare (bootstrap, Mann-Whitney) on the pooled samples
//      naive          the median ratio beyond the tolerance
//    Each column: the shares judged regression / improvement / unchanged (the rest is
//    inconclusive) and the coverage of the 99% interval (cov). At 0% slowdown regressions and
//    improvements are false verdicts.
// 2. The stop rule across pairs (check_stop after each pair, then the verdict): the shares of
//    sessions judged each way, the 99% interval's coverage of the true ratio, and the mean
//    pairs used, per tolerance and true slowdown.
//
// 3. A busy machine (`busy` of the calls share a CPU with another job and take 1.5x to 3x as
//    long, batches of 8 calls): the same sessions under the stop rule judged on each batch's
//    median and on its lower quartile (core::AbRound::base_q1_ns, what attnprof ab records and
//    the gate judges), the shares judged each way, the coverage and the pairs used.
//
//   build-*/bench/bench_paired [sessions=400] [bias=0.011] [rounds=16] [max_pairs=12] [busy=0.4]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness/stats/hodges_lehmann.h"
#include "tests/unit/paired_simulation.h"

using namespace attnprof;

namespace {

struct Tally {
  int reg = 0, impr = 0, unch = 0, covered = 0, n = 0;
  long pairs = 0;
  void add(const gate::CaseVerdict& v, double truth) {
    ++n;
    reg += v.verdict == gate::Verdict::regression;
    impr += v.verdict == gate::Verdict::improvement;
    unch += v.verdict == gate::Verdict::unchanged;
    covered += std::isfinite(v.ci_low) && v.ci_low <= truth && truth <= v.ci_high;
  }
  double pct(int x) const { return n ? 100.0 * x / n : 0; }
  void print() const {
    std::printf(" %3.0f%% %3.0f%% %3.0f%% %5.1f%% |", pct(reg), pct(impr), pct(unch), pct(covered));
  }
};

// The statistic over rounds alone: the signed-rank interval of all rounds' log ratios.
gate::CaseVerdict rounds_only(const testing::Simulated& s, const gate::Options& o) {
  std::vector<double> d;
  for (const auto& r : s.rounds) d.push_back(std::log(r.head_ns / r.base_ns));
  const auto est = stats::hodges_lehmann_one_sample(d, o.confidence);
  gate::CaseVerdict v;
  v.tolerance = *o.tolerance;
  v.ratio = std::exp(est.shift);
  v.ci_low = std::exp(est.ci.low);
  v.ci_high = std::exp(est.ci.high);
  v.p_adjusted = gate::no_value;
  gate::decide(v, o, "rounds", "");
  return v;
}

gate::CaseVerdict as_verdict(gate::Verdict verdict) {
  gate::CaseVerdict v;
  v.verdict = verdict;
  v.ci_low = v.ci_high = gate::no_value;
  return v;
}

void fixed_design(int sessions, const testing::Workers& w, int pairs, double tolerance) {
  gate::Options o;
  o.tolerance = tolerance;
  o.resamples = 2000;
  std::printf("\n1. %d pairs x %d rounds, worker bias sd %.1f%%, tolerance %.1f%%, %d sessions\n",
              pairs, w.rounds, w.bias_sd * 100, tolerance * 100, sessions);
  std::printf("%5s | %-25s | %-25s | %-25s | %-25s |\n", "slow", "two-level", "rounds only",
              "unpaired", "naive");
  std::printf("%5s |", "");
  for (int i = 0; i < 4; ++i) std::printf(" %-25s |", " reg impr unch   cov");
  std::printf("\n");
  for (double slow : {0.0, 0.03, 0.05, 0.10}) {
    Tally t[4];
    for (int k = 0; k < sessions; ++k) {
      testing::Machine m(7000 + k, {});
      testing::Simulated s;
      for (int p = 0; p < pairs; ++p) m.add_pair(s, 1e5, 1e5 * (1 + slow), w);
      t[0].add(testing::judge_paired(s, o), 1 + slow);
      t[1].add(rounds_only(s, o), 1 + slow);
      t[2].add(testing::judge_unpaired(s, o), 1 + slow);
      t[3].add(as_verdict(testing::judge_naive(s, tolerance)), 1 + slow);
    }
    std::printf("%4.0f%% |", slow * 100);
    for (const auto& x : t) x.print();
    std::printf("\n");
  }
}

void stop_rule(int sessions, const testing::Workers& w, const gate::StopRule& rule) {
  std::printf("\n2. stop rule: %d-%d pairs of %d rounds, worker bias sd %.1f%%, %d sessions\n",
              rule.min_pairs, rule.max_pairs, w.rounds, w.bias_sd * 100, sessions);
  std::printf("  %4s %5s | %5s %5s %5s %5s | %6s | %5s\n", "tol", "slow", "reg", "impr", "unch",
              "inc", "cov99", "pairs");
  for (double tol : {0.01, 0.02, 0.05}) {
    for (double slow : {0.0, 0.02, 0.05, 0.10}) {
      Tally t;
      for (int k = 0; k < sessions; ++k) {
        testing::Machine m(11000 + k, {});
        const auto out = testing::run_session(m, 1e5, 1e5 * (1 + slow), tol, w, rule);
        t.add(out.verdict, 1 + slow);
        t.pairs += out.pairs;
      }
      std::printf("  %3.0f%% %4.0f%% | %4.1f%% %4.1f%% %4.1f%% %4.1f%% | %5.1f%% | %5.2f\n",
                  tol * 100, slow * 100, t.pct(t.reg), t.pct(t.impr), t.pct(t.unch),
                  t.pct(t.n - t.reg - t.impr - t.unch), t.pct(t.covered), double(t.pairs) / t.n);
    }
  }
}

void busy_machine(int sessions, const testing::Workers& w, const gate::StopRule& rule,
                  double busy) {
  std::printf(
      "\n3. busy machine: %.0f%% of calls share a CPU (1.5-3x), batches of 8, stop rule "
      "%d-%d pairs of %d rounds, worker bias sd %.1f%%, %d sessions, tolerance 1%%\n",
      busy * 100, rule.min_pairs, rule.max_pairs, w.rounds, w.bias_sd * 100, sessions);
  std::printf("  %5s %-15s | %5s %5s %5s %5s | %6s | %5s\n", "slow", "judged on", "reg", "impr",
              "unch", "inc", "cov99", "pairs");
  for (double slow : {0.0, 0.02, 0.05, 0.10}) {
    for (bool q1 : {false, true}) {
      testing::Drift d;
      d.outlier_chance = busy;
      d.batch = 8;
      d.record_q1 = q1;
      Tally t;
      for (int k = 0; k < sessions; ++k) {
        testing::Machine m(15000 + k, d);  // the same machines for both rows
        const auto out = testing::run_session(m, 1e5, 1e5 * (1 + slow), 0.01, w, rule);
        t.add(out.verdict, 1 + slow);
        t.pairs += out.pairs;
      }
      std::printf("  %4.0f%% %-15s | %4.1f%% %4.1f%% %4.1f%% %4.1f%% | %5.1f%% | %5.2f\n",
                  slow * 100, q1 ? "lower quartiles" : "batch medians", t.pct(t.reg), t.pct(t.impr),
                  t.pct(t.unch), t.pct(t.n - t.reg - t.impr - t.unch), t.pct(t.covered),
                  double(t.pairs) / t.n);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sessions = argc > 1 ? std::atoi(argv[1]) : 400;
  testing::Workers w;
  w.bias_sd = argc > 2 ? std::atof(argv[2]) : 0.011;
  w.rounds = argc > 3 ? std::atoi(argv[3]) : 16;
  gate::StopRule rule;
  rule.max_pairs = argc > 4 ? std::atoi(argv[4]) : 12;
  const double busy = argc > 5 ? std::atof(argv[5]) : 0.4;
  fixed_design(sessions, w, 4, 0.02);
  stop_rule(sessions, w, rule);
  busy_machine(sessions, w, rule, busy);
  std::printf(
      "\nreg/impr: shares judged a regression / an improvement (at 0%% slow both are false "
      "verdicts); unch: judged unchanged; inc: inconclusive; cov/cov99: the share of 99%% "
      "intervals holding the true ratio.\n");
  return 0;
}
