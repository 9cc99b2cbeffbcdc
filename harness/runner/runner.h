// Runs one case end to end: hardware match, support check, inputs, correctness against the
// reference, measurement, and a separate traced pass for the cost matrix. Every outcome is a
// CaseResult (ok, failed, skipped, error); only a broken harness throws.
#pragma once

#include "harness/core/types.h"
#include "harness/env/environment.h"

namespace attnprof::runner {

struct Options {
  bool trace = true;  // traced pass and cost matrix (overridden per case by measure.trace)
  bool require_hardware = false;   // a hardware mismatch fails the case instead of skipping it
  int threads = 0;                 // CPU intra-op threads; 0: the case's, else LibTorch's default
  std::string perfetto_dir;        // write each traced pass as <dir>/<case key, / as _>.json
  bool hardware_counters = false;  // DRAM bytes through CUPTI's range profiler (GPU only)
};

class Runner {
 public:
  Runner(env::Description env, Options options);
  core::CaseResult run(const core::Case& c);

 private:
  env::Description m_env;
  Options m_options;
  int m_default_threads;  // LibTorch's own, restored for cases that set none
};

}  // namespace attnprof::runner
