// attnprof ab's session: every case measured by several pairs of fresh workers, until the
// paired statistic settles it.
//
// Why several pairs: interleaved rounds (driver.h) cancel what the machine does to both sides,
// not what one process carries for its whole life (its heap and code layout, where its pages
// landed, the core it runs on). Every round of one pair of workers shares that bias, it is
// different for the next pair, and on this kind of machine it is as large as the changes a gate
// must catch (A/A sessions here: the 99% interval over one pair's rounds covered 1.0 in 78% of
// verdicts). So the pair of workers is a level of the statistic (gate/paired.h), and a session
// is a sequence of pairs:
//   pair 0      both workers start; every case runs its rounds, with the traced pass for the
//               cost matrix; the case results (summaries, samples, cost) come from this pair
//   pair 1, 2.. fresh workers (each with a random-length environment variable, so the initial
//               stack differs too where the kernel does not randomize it), only the cases not
//               yet settled, their rounds numbered on, no traced pass
//   after each case's pair: check_stop() on all its rounds so far; from min_pairs on a case
//   whose interval lies inside or beyond the tolerance is settled and not measured again
// Pairs go over the cases (a pair measures every unsettled case), not cases over pairs: a
// worker's start is paid once per pair, and a case's pairs lie minutes apart, so a slow stretch
// of the machine rarely covers two of them. The session stops at max_pairs, or before a pair
// that would end past the time limit; a case left unsettled is judged on what it has, and its
// verdict says how many more pairs and minutes it would take (pair_seconds).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/ab/driver.h"
#include "harness/gate/paired.h"
#include "harness/store/database.h"
#include "harness/worker/supervisor.h"

namespace attnprof::ab {

struct SessionOptions {
  Options rounds;                // per case and pair (max_rounds: rounds per pair; trace: pair 0)
  gate::StopRule stop;           // pairs of workers: min_pairs, max_pairs, confidence
  gate::Options gate;            // the tolerance of each case
  double time_limit_s = 0;       // no pair starts that would end after this; 0: no limit
  bool randomize_layout = true;  // a random-length environment variable in every worker
  // Both workers of a pair on the same CPUs for a CPU case with fewer threads than this process
  // may use: a random draw of as many CPUs as it has threads, per pair (Session::share_cpus);
  // and each intra-op thread of a CPU case on the same CPU in both (Session::start_pair).
  bool share_cpus = true;
  std::uint64_t seed = 0x6c61796f7574ull;  // the layout padding
};

// Where a session writes: the store, the A/B pair's id and its two runs.
struct Sink {
  store::Database& db;
  std::string pair_id, base_run, head_run;
};

// What the CLI shows as the session goes.
struct Observer {
  std::function<void(int pair, int cases)> pair_started;  // pair 0, 1, ...
  std::function<void(const std::string& key)> case_started;
  std::function<void(const std::string& key, const std::string& outcome)> case_done;
  std::function<void(const std::string& line)> message;  // a worker's stderr line
};

// One case's course through the session.
struct CaseCourse {
  int pairs = 0;         // pairs of workers that measured it
  int rounds = 0;        // its rounds, all pairs
  double seconds = 0;    // its time in all pairs, its share of the workers' starts included
  std::string state;     // "settled", "max pairs", "time limit", "one side only",
                         // "not measured on both sides", or why a later pair ended it
  gate::StopCheck last;  // the stop rule's last look
};

class Session {
 public:
  Session(worker::Spawn base, worker::Spawn head, SessionOptions options);
  ~Session();

  // The current pair's workers: pair 0's until run() starts the next (described() asks them).
  worker::Supervisor& base() { return *m_base; }
  worker::Supervisor& head() { return *m_head; }

  // Measures every case; writes pair 0's case results and every round to the sink.
  void run(const std::vector<core::Case>& cases, Sink& sink, const Observer& observer);

  const std::map<std::string, CaseCourse>& courses() const { return m_courses; }
  // Per case: seconds one more pair of workers costs it (gate::PairedCase::pair_seconds).
  std::map<std::string, double> pair_seconds() const;
  int pairs_started() const { return m_pairs; }
  // How a pair's workers sit on the CPUs, for the session's first line: on one draw of CPUs
  // with each CPU case's threads bound in one order, bound by the user's OpenMP settings, or
  // where the OS puts them (--no-shared-cpus).
  std::string cpu_placement() const;
  double wall_seconds() const { return m_wall_s; }

 private:
  void start_pair(int pair);
  void share_cpus(const core::Case& c);
  std::string measure(const core::Case& c, int pair, Sink& sink);

  worker::Spawn m_base_spawn, m_head_spawn;
  SessionOptions m_options;
  std::unique_ptr<worker::Supervisor> m_base, m_head;
  std::vector<int> m_cpu_order;  // this pair's draw of the allowed CPUs (share_cpus)
  std::map<std::string, CaseCourse> m_courses;
  std::map<std::string, std::vector<core::AbRound>> m_rounds;
  int m_pairs = 0;
  double m_wall_s = 0;
};

// The two runs of an A/B pair in the store, linked by one pair id, and where the session writes.
struct StoredPair {
  core::Run base, head;  // as begun: ids, pair id, sides, each side's environment
  Sink sink;
  std::string warning;  // when the two sides describe different environments; else empty
};

// Begins both runs of a new pair. `shared` holds what both runs share (commit, branch, PR, CI
// URL); the base side's commit is `base_commit`. Each side's environment is what the session's
// workers describe, for the first case's device and clock policy.
StoredPair begin_pair(store::Database& db, const core::Run& shared, const std::string& base_commit,
                      Session& session, const core::Case& first);
// Both runs ended now, complete.
void finish_pair(const StoredPair& pair);

// Whether a worker runs a case's kernel: a built-in it lists, an op a plugin registered, or an
// AOTInductor package (every worker runs those).
bool knows(const worker::Described& d, const core::Case& c);

}  // namespace attnprof::ab
