// A synthetic shared machine for testing and benchmarking A/B statistics (test_paired.cpp,
// bench/bench_paired.cpp): every sample is true time x machine state x sample noise, where the
// machine state is a random walk with sudden steps of up to +-60% (other jobs starting and
// stopping; what a 2-core CI machine shared by several builds does to a median). The defaults
// give per-round ratios with a 10-90% range of about 0.95-1.05 and rare wild rounds, about what
// alternating rounds of one SDPA call showed on such a machine. Both arrangements draw from the
// same machine:
//   interleaved  an A/B: per round, a batch of base and a batch of head, in random order, a
//                little apart in time (the state may move between the two batches)
//   sequential   what a baseline file or history compares: all base batches, then all head
//                batches, later on the same drifting machine
// An A/B session is several pairs of fresh workers (add_pair, run_session): each worker process
// carries a bias of its own for its whole life (Workers::bias_sd: layout, page placement, the
// core it landed on), the same in all its rounds, which pairing within rounds cannot cancel;
// one pair can be given a slow stretch (its base side slower in some or all of its rounds).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/gate/compare.h"
#include "harness/gate/paired.h"
#include "harness/stats/quantile.h"
#include "harness/stats/rng.h"

namespace attnprof::testing {

struct Drift {
  // Between rounds (or between consecutive batches of a sequential run): the machine's speed
  // wanders, and now and then jumps.
  double walk = 0.05;         // sd of the log state's move
  double step_chance = 0.05;  // chance of a sudden step ...
  double step = 0.47;         // ... of up to +-log(1.6) = +-0.47
  // Within a round, between its two batches (tens of ms apart): smaller moves, rarer jumps.
  double within_walk = 0.01;
  double within_step_chance = 0.01;
  double sample_noise = 0.03;    // sd of one sample's log time
  double outlier_chance = 0.02;  // a preempted sample takes 1.5x to 3x as long
  int batch = 5;                 // samples per batch
  // Record each batch's lower quartile beside its median (core::AbRound::base_q1_ns), as attnprof
  // ab does; off, the rounds are judged on their medians.
  bool record_q1 = false;
};

struct Simulated {
  std::vector<core::AbRound> rounds;  // interleaved: per-round batch medians
  std::vector<double> base_samples, head_samples;
  int pairs = 0;  // pairs of workers so far (add_pair)
};

// The pairs of workers of a session.
struct Workers {
  double bias_sd = 0;    // sd of one worker process's log bias; the ratio's is sqrt(2) times it
  int rounds = 16;       // rounds per pair
  int slow_pair = -1;    // this pair's base worker ...
  double slow_base = 1;  // ... is this much slower (a stretch in a slow state) ...
  int slow_rounds = 1 << 30;  // ... in its first this many rounds
};

class Machine {
 public:
  Machine(std::uint64_t seed, Drift drift) : m_rng(seed), m_drift(drift) {}

  // One batch of samples of a kernel whose true time is `ns`, taken now.
  std::vector<double> batch(double ns) {
    std::vector<double> out;
    for (int i = 0; i < m_drift.batch; ++i) {
      double t = ns * std::exp(m_state + m_drift.sample_noise * m_rng.normal());
      if (m_rng.uniform() < m_drift.outlier_chance) t *= 1.5 + 1.5 * m_rng.uniform();
      out.push_back(std::round(t));
    }
    return out;
  }

  // The machine's state moves on: by `walk` (sd, log) and, with `chance`, a step of up to
  // +-m_drift.step. Kept within about e^+-1 of nominal.
  void move(double walk, double chance) {
    m_state += walk * m_rng.normal();
    if (m_rng.uniform() < chance) m_state += m_drift.step * (2 * m_rng.uniform() - 1);
    m_state = std::clamp(m_state, -1.0, 1.0);
  }

  Simulated interleaved(double base_ns, double head_ns, int rounds) {
    Simulated s;
    append(s, base_ns, head_ns, rounds, 0);
    s.pairs = 1;
    return s;
  }

  // One more pair of fresh workers, each with its own bias: `w.rounds` rounds on s.
  void add_pair(Simulated& s, double base_ns, double head_ns, const Workers& w) {
    const int pass = s.pairs++;
    double b = std::exp(w.bias_sd * m_rng.normal()), h = std::exp(w.bias_sd * m_rng.normal());
    const int slow = pass == w.slow_pair ? std::min(w.slow_rounds, w.rounds) : 0;
    append(s, base_ns * b * w.slow_base, head_ns * h, slow, pass);
    append(s, base_ns * b, head_ns * h, w.rounds - slow, pass);
  }

  Simulated sequential(double base_ns, double head_ns, int batches) {
    Simulated s;
    for (int r = 0; r < batches; ++r) {
      auto b = batch(base_ns);
      move(m_drift.walk, m_drift.step_chance);
      s.base_samples.insert(s.base_samples.end(), b.begin(), b.end());
    }
    for (int r = 0; r < batches; ++r) {
      auto h = batch(head_ns);
      move(m_drift.walk, m_drift.step_chance);
      s.head_samples.insert(s.head_samples.end(), h.begin(), h.end());
    }
    return s;
  }

 private:
  void append(Simulated& s, double base_ns, double head_ns, int rounds, int pass) {
    for (int r = 0; r < rounds; ++r) {
      core::AbRound round;
      round.base_first = !(m_rng.uniform() < 0.5);
      round.pass = pass;
      std::vector<double> first = batch(round.head_first() ? head_ns : base_ns);
      move(m_drift.within_walk, m_drift.within_step_chance);
      std::vector<double> second = batch(round.head_first() ? base_ns : head_ns);
      move(m_drift.walk, m_drift.step_chance);
      std::vector<double>& b = round.head_first() ? second : first;
      std::vector<double>& h = round.head_first() ? first : second;
      round.base_ns = stats::median(b);
      round.head_ns = stats::median(h);
      if (m_drift.record_q1) {
        round.base_q1_ns = stats::quantile(b, 0.25);
        round.head_q1_ns = stats::quantile(h, 0.25);
      }
      s.base_samples.insert(s.base_samples.end(), b.begin(), b.end());
      s.head_samples.insert(s.head_samples.end(), h.begin(), h.end());
      s.rounds.push_back(round);
    }
  }

  stats::Rng m_rng;
  Drift m_drift;
  double m_state = 0;
};

// The same data judged as unpaired samples (gate::compare, a baseline file's way): base's
// pooled samples are the baseline, head's the run.
inline gate::CaseVerdict judge_unpaired(const Simulated& s, const gate::Options& o) {
  gate::Baseline b;
  gate::BaselineCase& c = b.cases["k"];
  c.samples_ns = stats::sorted_copy(s.base_samples);
  c.median_ns = stats::median_sorted(c.samples_ns);
  c.n = static_cast<int>(c.samples_ns.size());
  core::Run run;
  core::CaseResult& cr = run.cases.emplace_back();
  cr.spec.key = "k";
  for (double v : s.head_samples) cr.samples.push_back({static_cast<std::int64_t>(v)});
  return gate::compare(b, run, o).at(0);
}

// The naive rule: the ratio of the two medians, beyond the tolerance or not.
inline gate::Verdict judge_naive(const Simulated& s, double tolerance) {
  const double r = stats::median(s.head_samples) / stats::median(s.base_samples);
  return r > 1 + tolerance   ? gate::Verdict::regression
         : r < 1 - tolerance ? gate::Verdict::improvement
                             : gate::Verdict::unchanged;
}

inline gate::CaseVerdict judge_paired(const Simulated& s, const gate::Options& o) {
  gate::PairedCase c;
  c.key = "k";
  c.base = c.head = gate::PairedSide{};
  c.rounds = s.rounds;
  return gate::compare_paired(std::span<const gate::PairedCase>(&c, 1), o).at(0);
}

struct SessionOutcome {
  gate::CaseVerdict verdict;
  int pairs = 0;
};

// A session of one case as attnprof ab runs it: pairs of fresh workers until the stop rule
// decides, then the verdict on every round.
inline SessionOutcome run_session(Machine& m, double base_ns, double head_ns, double tolerance,
                                  const Workers& w, const gate::StopRule& rule = {}) {
  Simulated s;
  do m.add_pair(s, base_ns, head_ns, w);
  while (!gate::check_stop(s.rounds, tolerance, rule).decided);
  gate::Options o;
  o.tolerance = tolerance;
  return {judge_paired(s, o), s.pairs};
}

}  // namespace attnprof::testing
