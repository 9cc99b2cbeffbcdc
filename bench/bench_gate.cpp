// Calibrates the gate (harness/gate/compare.h): how often does it cry wolf, and how often does
// it catch a real slowdown? Simulated runs, each a gate run over many cases, so Benjamini-
// Hochberg sees what it sees in CI:
//   A/A  both sides from the same distribution -> any "regression" is a false alarm
//   A/B  candidate 2%, 5%, 10% slower          -> "regression" is a detection
// Noise: lognormal per sample (CoV 1%, 3%, 5%), optionally with 2% outliers (1.5-3x spikes:
// preemption, a late clock ramp) and optionally a run-to-run offset (lognormal, 1%: what
// differs between two CI jobs on "the same" machine, invisible to any within-run statistic).
// Beside the gate (bootstrap ratio of medians; and the Hodges-Lehmann variant) runs a naive
// peer in the style of github-action-benchmark: alert when median ratio > 1 + tolerance.
//
//   build-*/bench/bench_gate [runs-per-cell=40] [cases-per-run=25] [samples=100] [resamples=10000]
//                            [tolerance=0.05]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/gate/compare.h"
#include "harness/stats/quantile.h"
#include "harness/stats/rng.h"
#include "harness/stats/summary.h"

using namespace attnprof;

namespace {

struct Noise {
  double cov;
  bool outliers;
  double run_sd;  // run-to-run offset
};

std::vector<double> draw(stats::Rng& rng, int n, double median, const Noise& noise) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    double x = median * std::exp(noise.cov * rng.normal());
    if (noise.outliers && rng.uniform() < 0.02) x *= 1.5 + 1.5 * rng.uniform();
    v.push_back(std::round(x));
  }
  return v;
}

struct Tally {
  int regression = 0, inconclusive = 0, unchanged = 0, improvement = 0, total = 0;
  void add(gate::Verdict v) {
    ++total;
    regression += v == gate::Verdict::regression;
    inconclusive += v == gate::Verdict::inconclusive;
    unchanged += v == gate::Verdict::unchanged;
    improvement += v == gate::Verdict::improvement;
  }
  double pct(int k) const { return 100.0 * k / total; }
};

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 40;
  const int cases = argc > 2 ? std::atoi(argv[2]) : 25;
  const int n = argc > 3 ? std::atoi(argv[3]) : 100;
  const int resamples = argc > 4 ? std::atoi(argv[4]) : 10000;
  const double tol = argc > 5 ? std::atof(argv[5]) : 0.05;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf(
      "gate calibration: %d runs x %d cases per cell, %d samples per side, tolerance "
      "%.0f%%, 99%% CI, alpha 0.01 (BH), %d bootstrap resamples\n\n",
      runs, cases, n, tol * 100, resamples);
  std::printf("%-28s %6s | %-27s | %-7s %-6s | %-7s\n", "noise", "slow",
              "gate: reg / inconcl / same", "HL reg", "HL inc", "naive");
  std::printf("%s\n", std::string(94, '-').c_str());
  double gate_seconds = 0;
  long gate_cases = 0;
  for (double run_sd : {0.0, 0.01}) {
    for (bool outliers : {false, true}) {
      for (double cov : {0.01, 0.03, 0.05}) {
        const Noise noise{cov, outliers, run_sd};
        for (double slow : {0.0, 0.02, 0.05, 0.10}) {
          stats::Rng rng(0xA11CE + static_cast<std::uint64_t>(cov * 1e4 + slow * 1e3 +
                                                              outliers * 7 + run_sd * 1e5));
          Tally boot, hl;
          int naive = 0;
          for (int r = 0; r < runs; ++r) {
            // One offset per side per run, shared by its cases (one CI job, one machine state).
            const double offset_a = std::exp(run_sd * rng.normal());
            const double offset_b = std::exp(run_sd * rng.normal());
            gate::Baseline base;
            core::Run run;
            for (int c = 0; c < cases; ++c) {
              const std::string key = "case" + std::to_string(c);
              const double median = 1e4 * (1 + c);  // 10 us .. 250 us
              auto a = draw(rng, n, median * offset_a, noise);
              auto b = draw(rng, n, median * offset_b * (1 + slow), noise);
              gate::BaselineCase bc;
              core::Summary s = stats::summarize(a);
              bc.median_ns = s.median_ns;
              bc.n = n;
              bc.samples_ns = a;
              base.cases[key] = bc;
              core::CaseResult cr;
              cr.spec.key = key;
              for (double x : b) cr.samples.push_back({static_cast<std::int64_t>(x), 0, {}, false});
              run.cases.push_back(cr);
              naive += stats::median(b) / stats::median(a) > 1 + tol;
            }
            gate::Options o;
            o.resamples = resamples;
            o.tolerance = tol;
            auto t0 = std::chrono::steady_clock::now();
            for (const auto& v : gate::compare(base, run, o)) boot.add(v.verdict);
            gate_seconds +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            gate_cases += cases;
            o.effect = gate::Effect::hodges_lehmann;
            for (const auto& v : gate::compare(base, run, o)) hl.add(v.verdict);
          }
          char label[64];
          std::snprintf(label, sizeof label, "CoV %.0f%%%s%s", cov * 100,
                        outliers ? " +2% spikes" : "", run_sd > 0 ? " +1% run drift" : "");
          std::printf("%-28s %5.0f%% | %7.1f%% / %5.1f%% / %5.1f%% | %6.1f%% %5.1f%% | %6.1f%%\n",
                      label, slow * 100, boot.pct(boot.regression), boot.pct(boot.inconclusive),
                      boot.pct(boot.unchanged), hl.pct(hl.regression), hl.pct(hl.inconclusive),
                      100.0 * naive / (runs * cases));
        }
      }
    }
  }
  std::printf("\nslow 0%%: regression columns are false-alarm rates; slow > 0: detection rates.\n");
  std::printf("gate cost (bootstrap effect): %.2f ms per case at n=%d per side\n",
              1e3 * gate_seconds / static_cast<double>(gate_cases), n);
  return 0;
}
