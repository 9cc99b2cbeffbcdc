// Shared by the report tests (test_verdicts.cpp, test_html.cpp): a gate report with one case
// of each kind a reader must tell apart, and golden-file comparison (golden.h).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "golden.h"
#include "harness/report/verdicts.h"

namespace attnprof::testing {

inline gate::CaseVerdict verdict(std::string key, gate::Verdict v, double ratio,
                                 std::string reason = "r") {
  gate::CaseVerdict c;
  c.key = std::move(key);
  c.baseline_key = c.key;
  c.verdict = v;
  c.ratio = ratio;
  c.ci_low = ratio - 0.01;
  c.ci_high = ratio + 0.01;
  c.p_value = c.p_adjusted = 0.001;
  c.tolerance = 0.05;
  c.method = "bootstrap";
  c.baseline_median_ns = 1000;
  c.candidate_median_ns = 1000 * ratio;
  c.baseline_n = c.candidate_n = 30;
  c.reason = std::move(reason);
  return c;
}

// A 3-line error, as a kernel's exception text arrives.
inline const char* kMultiLineError =
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1";

inline report::GateReport sample_report() {
  report::GateReport r;
  r.run.id = "0f1e2d3c-run";
  r.run.git_commit = "4d5e6f7a8b9c0d1e2f3a";
  r.run.git_branch = "pr-7";
  r.run.env.fields = {{"device.name", "NVIDIA H100 80GB HBM3"}, {"cuda.driver", "580"}};
  r.baseline = "baselines/h100-llama.yaml";
  r.exit_code = 1;
  r.verdicts = {
      verdict("llama-2-7b/prefill/b1-s512-bf16-causal/sdpa.flash", gate::Verdict::unchanged, 1.004,
              "interval inside ±5.0%"),
      verdict("llama-2-7b/prefill/b1-s2048-bf16-causal/sdpa.flash", gate::Verdict::regression, 1.12,
              "slower by more than the tolerance"),
      verdict("llama-2-7b/prefill/b4-s4096-bf16-causal/cuda.flash", gate::Verdict::regression, 1.31,
              "slower by more than the tolerance"),
      verdict("llama-2-7b/decode/b16-kv16384-bf16-none/cuda.decode", gate::Verdict::failed,
              std::nan(""), kMultiLineError),
      verdict("llama-2-7b/decode/b1-kv4096-bf16-none/sdpa.efficient", gate::Verdict::inconclusive,
              1.04, "interval [-1.0%, +9.0%] crosses the tolerance; more samples would tell"),
      verdict("llama-2-7b/decode/b64-kv4096-bf16-none/eager", gate::Verdict::new_case, std::nan(""),
              "not in the baseline; not checked (reference: none)"),
      verdict("llama-2-7b/decode/b1-kv4096-bf16-none/sdpa.math", gate::Verdict::unchanged, 0.998,
              "interval inside ±5.0%"),
  };
  r.verdicts[3].ci_low = r.verdicts[3].ci_high = std::nan("");
  r.verdicts[3].candidate_median_ns = 0;
  r.verdicts[5].baseline_median_ns = 0;
  r.verdicts[5].ci_low = r.verdicts[5].ci_high = std::nan("");
  for (auto& v : r.verdicts) v.reference = "sdpa.math";
  r.verdicts[5].reference = "none";  // run with reference: none, which its reason says
  return r;
}

}  // namespace attnprof::testing
