// Runs one case end to end: hardware match, support check, inputs, correctness against the
// reference, measurement, and a separate traced pass for the cost matrix. Every outcome is a
// CaseResult (ok, failed, skipped, error); only a broken harness throws.
//
// Two ways to drive it. Runner::run does everything for one case (attnprof run). A CaseSession
// holds a prepared case between calls, so that a driver can interleave two of them in two
// processes (attnprof ab): prepare and check, warm up, batches of samples on demand, finish.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "harness/core/types.h"
#include "harness/env/environment.h"
#include "harness/measure/engine.h"

namespace attnprof::runner {

struct Options {
  bool trace = true;  // traced pass and cost matrix (overridden per case by measure.trace)
  bool require_hardware = false;   // a hardware mismatch fails the case instead of skipping it
  int threads = 0;                 // CPU intra-op threads; 0: the case's, else LibTorch's default
  std::string perfetto_dir;        // write each traced pass as <dir>/<case key, / as _>.json
  bool hardware_counters = false;  // DRAM bytes through CUPTI's range profiler (GPU only)
  bool require_idle_gpu = false;   // another process on the case's GPU: an error, not measured
};

class CaseSession {
 public:
  // Prepares the case: hardware match, support check, thread count, inputs, the correctness
  // check against the reference, the workload and its timer. ready() says whether it can be
  // measured; otherwise result() is final (skipped, failed or error).
  CaseSession(const core::Case& c, const env::Description& env, const Options& options,
              int default_threads);
  ~CaseSession();
  CaseSession(const CaseSession&) = delete;
  CaseSession& operator=(const CaseSession&) = delete;

  bool ready() const { return m_ready; }
  const core::CaseResult& result() const { return m_result; }

  // Each of these ends the session (ready() false, result() says why) when the kernel fails.
  void warm_up();
  std::vector<core::Sample> batch(double batch_ns, int min_calls, int max_calls);
  // The whole sampling engine (warm-up, then adaptive samples): what attnprof run does.
  void measure_adaptive();

  // Summarizes `samples` (the batches a driver kept; ignored after measure_adaptive, which
  // keeps its own), adds the timer's metrics and notes and the roofline figures, and runs the
  // traced pass when asked. Returns the final result.
  core::CaseResult finish(std::vector<core::Sample> samples, bool trace);

 private:
  struct State;
  template <class F>
  bool guarded(F&& f);
  void fail(core::CaseStatus status, std::string why);

  const env::Description& m_env;
  Options m_options;
  core::CaseResult m_result;
  bool m_ready = false;
  bool m_measured = false;  // measure_adaptive ran: its samples are the result's
  int m_batch_cpu = -1;      // the CPU the calling thread times batches on (thread_placement.h)
  std::unique_ptr<State> m_state;
};

class Runner {
 public:
  Runner(env::Description env, Options options);
  core::CaseResult run(const core::Case& c);
  std::unique_ptr<CaseSession> prepare(const core::Case& c);
  const env::Description& environment() const { return m_env; }

 private:
  env::Description m_env;
  Options m_options;
  int m_default_threads;  // LibTorch's own, restored for cases that set none
};

}  // namespace attnprof::runner
