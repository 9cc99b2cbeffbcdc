// Paired A/B statistics (harness/gate/paired.h) against unpaired comparisons on identical
// synthetic data from a drifting shared machine (tests/unit/paired_simulation.h: a random walk
// of the machine's speed with sudden +-60% steps, 3% sample noise, 2% preempted samples).
// For each drift level and true slowdown, over many seeded trials:
//   paired         gate::compare_paired on the per-round log ratios of an interleaved A/B
//   unpaired/AB    gate::compare (bootstrap, Mann-Whitney) on the same A/B's pooled samples
//   naive/AB       median ratio beyond the tolerance, on the same pooled samples
//   unpaired/seq   gate::compare when base was measured first and head after (a baseline file)
//   naive/seq      the median ratio rule on that sequential data
// Each column gives the shares of trials judged regression / improvement / unchanged (the rest
// is inconclusive). At 0% slowdown regressions and improvements are false alarms; above the
// tolerance a regression is a detection. Rates only, no timings: the point is what each method
// concludes from the same numbers.
//
//   build-*/bench/bench_paired [trials=200] [rounds=64] [tolerance=0.02]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/unit/paired_simulation.h"

using namespace attnprof;

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::atoi(argv[1]) : 200;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 64;
  const double tolerance = argc > 3 ? std::atof(argv[3]) : 0.02;
  gate::Options o;
  o.tolerance = tolerance;
  o.resamples = 2000;
  struct Level {
    const char* name;
    testing::Drift drift;
  };
  testing::Drift quiet;
  quiet.walk = quiet.within_walk = 0.002;
  quiet.step_chance = quiet.within_step_chance = 0;
  quiet.outlier_chance = 0;
  testing::Drift mild;
  mild.walk = 0.01;
  mild.within_walk = 0.005;
  mild.step_chance = 0.01;
  mild.within_step_chance = 0.002;
  mild.step = 0.1;
  const Level levels[] = {{"quiet", quiet}, {"mild drift", mild}, {"strong drift", {}}};

  std::printf("%d trials, %d rounds of %d samples a side, tolerance %.1f%%\n", trials, rounds,
              testing::Drift{}.batch, tolerance * 100);
  std::printf("%-13s %5s | %-14s | %-14s | %-14s | %-14s | %-14s |\n", "machine", "slow", "paired",
              "unpaired/AB", "naive/AB", "unpaired/seq", "naive/seq");
  std::printf("%-13s %5s |", "", "");
  for (int i = 0; i < 5; ++i) std::printf(" %-14s |", " reg impr unch");
  std::printf("\n%s\n", std::string(104, '-').c_str());
  for (const auto& level : levels) {
    for (double slow : {0.0, 0.03, 0.05, 0.10}) {
      int reg[5] = {}, impr[5] = {}, unch[5] = {};
      auto count = [&](int i, gate::Verdict v) {
        reg[i] += v == gate::Verdict::regression;
        impr[i] += v == gate::Verdict::improvement;
        unch[i] += v == gate::Verdict::unchanged;
      };
      for (int t = 0; t < trials; ++t) {
        testing::Machine ab(7000 + t, level.drift), seq(9000 + t, level.drift);
        auto s = ab.interleaved(1e5, 1e5 * (1 + slow), rounds);
        auto q = seq.sequential(1e5, 1e5 * (1 + slow), rounds);
        count(0, testing::judge_paired(s, o).verdict);
        count(1, testing::judge_unpaired(s, o).verdict);
        count(2, testing::judge_naive(s, tolerance));
        count(3, testing::judge_unpaired(q, o).verdict);
        count(4, testing::judge_naive(q, tolerance));
      }
      auto pct = [&](int x) { return 100.0 * x / trials; };
      std::printf("%-13s %4.0f%% |", level.name, slow * 100);
      for (int i = 0; i < 5; ++i)
        std::printf(" %3.0f%% %3.0f%% %3.0f%% |", pct(reg[i]), pct(impr[i]), pct(unch[i]));
      std::printf("\n");
    }
  }
  std::printf(
      "\nreg/impr: shares judged a regression / an improvement (at 0%% slow both are false "
      "alarms; above the tolerance a regression is a detection). unch: share judged unchanged "
      "(right at 0%%, a missed slowdown at 5%% and 10%%). The rest: inconclusive.\n");

  // The stopping rule on the strong-drift machine: how many rounds until decided.
  std::printf("\nstopping rule (strong drift, up to 128 rounds, tolerance %.1f%%):\n",
              tolerance * 100);
  std::printf("  %5s | %-12s | %-8s %-8s %-8s %-9s\n", "slow", "mean rounds", "inside", "above",
              "below", "undecided");
  for (double slow : {0.0, 0.01, 0.03, 0.05, 0.10}) {
    long total = 0;
    int inside = 0, above = 0, below = 0, undecided = 0;
    for (int t = 0; t < trials; ++t) {
      testing::Machine m(11000 + t, {});
      auto s = m.interleaved(1e5, 1e5 * (1 + slow), 128);
      for (int r = 1; r <= 128; ++r) {
        auto c = gate::check_stop(std::span(s.rounds).first(r), tolerance);
        if (!c.decided) continue;
        total += r;
        if (c.ci_low > 1 + tolerance)
          ++above;
        else if (c.ci_high < 1 - tolerance)
          ++below;
        else if (c.ci_low >= 1 - tolerance && c.ci_high <= 1 + tolerance)
          ++inside;
        else
          ++undecided;  // reached the limit still straddling
        break;
      }
    }
    auto pct = [&](int x) { return 100.0 * x / trials; };
    std::printf("  %4.0f%% | %12.1f | %7.1f%% %7.1f%% %7.1f%% %8.1f%%\n", slow * 100,
                double(total) / trials, pct(inside), pct(above), pct(below), pct(undecided));
  }
  std::printf(
      "inside: stopped as unchanged; above/below: stopped beyond the tolerance (a wrong "
      "decision at 0%% and 1%%, a right one at 3%% and more); undecided: 128 rounds.\n");
  return 0;
}
