// The committed baseline: baselines/<hardware>.yaml, one entry per case key with its summary
// and its samples, so that a later comparison can be a statistical one (bootstrap, rank test)
// rather than a ratio of two numbers.
//
//   hardware: cpu-ci-x86                # which machine class these timings belong to
//   fingerprint: 0123456789abcdef       # core::Environment::fingerprint() of the run
//   commit: 1f2e3d4                     # what was measured
//   cases:
//     "bert-base/prefill/b1-s128-fp32-none/sdpa.math":
//       median_ns: 81234
//       q1_ns: 80950
//       q3_ns: 81630
//       ci_low_ns: 81100                # distribution-free CI of the median
//       ci_high_ns: 81390
//       n: 400                          # samples measured
//       samples_ns: [80011, 80102, ...] # ascending; at most max_samples evenly spaced quantiles
//       run_medians_ns: [80877, 81234, 83010]  # one median per run, oldest first (--runs N)
//       timing: "cpu.wall"              # timing_mode.h: how the samples were timed
//       backend: flash                  # findings.h: what the case ran, how accurate it was
//       kernels: [aten::_scaled_dot_product_flash_attention_for_cpu, ...]
//       reference: sdpa.math
//       max_abs_error: 4.17e-07
//       mean_abs_error: 3.1e-08
//
// Only median_ns is required; without samples_ns the gate falls back to the summary's interval.
// run_medians_ns (two or more) make the comparison include run-to-run drift (compare.h); files
// written before it existed, or from one run, are read as they are and judged without it.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/gate/findings.h"

namespace attnprof::gate {

struct BaselineCase {
  double median_ns = 0, q1_ns = 0, q3_ns = 0;
  double ci_low_ns = 0, ci_high_ns = 0;  // 0, 0: not recorded
  int n = 0;
  std::vector<double> samples_ns;
  // One median per earlier run, oldest first: set by history baselines (history_baseline.h),
  // where n counts runs. When there are two or more, compare() judges the run's median against
  // the spread of these run medians instead of against pooled samples.
  std::vector<double> run_medians_ns;
  std::string timing;  // timing_mode.h; empty: not recorded (matches any mode)
  // What the case ran and how accurate it was (findings.h), from the newest run the entry was
  // written from; unknown parts stay empty (files written before they were recorded).
  Traits traits;
  // What a person should know about how the entry was built (history baselines: earlier runs
  // left out because they were timed differently); ends the verdict's reason. Not in files.
  std::string remark;
  int line = 0;  // where the entry is in the file, for messages; 0 when not from a file
};

struct Baseline {
  std::string path;  // where it was loaded from, empty when built in memory
  std::string hardware;
  std::string fingerprint;
  std::string commit;
  bool history = false;  // built by history_baseline() from stored runs, not read from a file
  std::map<std::string, BaselineCase> cases;
  // Why a case has no entry, by the run's case key (history baselines: too few runs since a
  // reset, say); compare() puts it in the `new` verdict's reason.
  std::map<std::string, std::string> notes;

  // By the case's key, then by its aliases (renamed cases keep their history). Sets
  // *matched_key to the key that matched.
  const BaselineCase* find(const core::Case& c, std::string* matched_key = nullptr) const;
};

// Parse a baseline; `path` names the file in diagnostics. Throws util::InputError carrying
// every problem found, each as path:line:col.
Baseline parse_baseline(const std::string& text, const std::string& path);
// Read and parse; a missing or unreadable file is util::InputError too ("path: cannot read").
Baseline load_baseline(const std::string& path);

struct BaselineOptions {
  std::string hardware;            // empty: the run's "device.name" field, else "cpu"
  std::size_t max_samples = 1000;  // more are thinned to evenly spaced quantiles
  bool include_unstable = false;   // keep unstable cases (core/stability.h; --include-unstable)
};

// Cases of the run that completed with at least one kept (not dropped) sample, less the
// unstable ones (a busy machine or GPU disturbed them: not a figure to gate against) unless
// options.include_unstable; Baseline::notes names each left out and why.
Baseline make_baseline(const core::Run& run, const BaselineOptions& options = {});
// From several runs of one environment, newest first (`baseline update --runs 3`): each case's
// summary, samples, timing mode and commit from the newest run that completed it, and
// run_medians_ns from every run that completed it with that timing mode (oldest first), so
// comparisons see how far the case moves between runs. util::InputError naming the runs when
// their environment fingerprints differ (a spread across machines is not noise).
Baseline make_baseline(const std::vector<core::Run>& runs, const BaselineOptions& options = {});
std::string to_yaml(const Baseline& baseline);
// Writes atomically (a temporary file renamed into place), creating missing folders;
// util::EnvironmentError naming `path` on failure.
void write_baseline(const std::string& path, const Baseline& baseline);
void write_baseline(const std::string& path, const core::Run& run,
                    const BaselineOptions& options = {});

}  // namespace attnprof::gate
