// Findings beside the time verdict: whether a case ran other kernels than its baseline, and
// whether its output got less accurate. A time verdict says how fast; these say what ran and how
// close to the reference it came, which can change with no change in time (sdpa.auto falling
// back from flash to math at a shape where both are as fast, an error ten times larger still
// under the tolerance).
//
//   kernels changed   the sets of kernels (GPU) or ATen ops (CPU) differ (core::CaseResult::
//                     kernels: names only, so neither their order nor their counts count), or
//                     the backend sdpa.auto chose differs. A side that recorded no set (no
//                     traced pass, a case stored before the set was) is unknown, never changed.
//   compile changed   a torch.compile variant (py:...@MODE) compiled more than `compile_factor`
//                     (2) times slower or faster than the baseline's, or into more graph
//                     breaks: a change that made the module break into pieces, or its compile a
//                     minute longer. Unknown where a side recorded no compile.
//   accuracy changed  checked against the same reference on both sides, the head's largest
//                     (or mean) absolute error is more than `accuracy_factor` (4) times the
//                     baseline's, where an error below the dtype's machine epsilon counts as
//                     that epsilon: an exact kernel (0) against one that rounds once (1e-7 in
//                     fp32) is not "infinitely worse". The case passed its check, so the error
//                     is still within the tolerance; a case beyond it is `failed`.
//   energy changed    on a GPU with NVML's energy counter on both sides, the head's energy per
//                     call (energy.joules_per_call) differs from the baseline's by more than
//                     `energy_tolerance` (10%) of it: a kernel as fast that draws more power,
//                     or one faster that costs more joules. Unknown where a side recorded none.
// Each is a warning that fails the gate only when asked (--fail-on-kernel-change,
// --fail-on-compile, --fail-on-accuracy); an accept or ignore annotation covers it like a regression.
// An energy change never fails the gate: it is what the fleet pays, not what the merge is.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"

namespace attnprof::gate {

// What one side of a comparison ran and how close it came to its reference.
struct Traits {
  std::string backend;                              // sdpa.auto's choice; empty: none recorded
  std::optional<std::vector<std::string>> kernels;  // outermost first; nullopt: unknown
  std::string reference;                            // what the errors are against; "none": none
  std::optional<double> max_abs_error, mean_abs_error;
  // A torch.compile variant's compile (its compile.* metrics); nullopt: none recorded.
  std::optional<double> compile_ms, compile_graphs, compile_graph_breaks;
  std::optional<double> joules_per_call;  // energy.joules_per_call; nullopt: none recorded
};
Traits traits_of(const core::CaseResult& r);

struct FindingRules {
  double accuracy_factor = 4;  // --accuracy-factor
  bool fail_on_kernel_change = false;
  bool fail_on_accuracy = false;
  double compile_factor = 2;  // --compile-factor
  bool fail_on_compile = false;
  double energy_tolerance = 0.10;  // a relative change in joules per call beyond this: a finding
};

struct EnergyChange {
  bool known = false;  // both sides recorded their energy per call
  bool changed = false;
  double base_j = 0, head_j = 0, tolerance = 0;
};

struct CompileChange {
  bool known = false;  // both sides recorded a compile
  bool changed = false;
  double base_ms = 0, head_ms = 0, factor = 0;
  double base_graphs = 0, head_graphs = 0, base_breaks = 0, head_breaks = 0;
};

struct KernelChange {
  bool known = false;    // both sides recorded a set or a backend
  bool changed = false;  // they differ
  // In the baseline's set only, in the head's only; in the order each side lists them.
  std::vector<std::string> removed, added;
  std::string base_backend, head_backend;  // sdpa.auto's choices, when both recorded one
};

struct AccuracyChange {
  bool known = false;  // both sides' errors against the same reference
  bool changed = false;
  double base_max = 0, head_max = 0;
  std::optional<double> base_mean, head_mean;
  double floor = 0;   // the dtype's epsilon: smaller errors count as it
  double factor = 0;  // FindingRules::accuracy_factor
};

struct Finding {
  std::string kind;    // "kernels changed", "compile changed", "accuracy changed", "energy changed"
  std::string text;    // the sentence every report prints, starting with `kind`
  bool fails = false;  // fails the gate (asked for, and not accepted or ignored)
};

struct Findings {
  KernelChange kernels;
  AccuracyChange accuracy;
  CompileChange compile;
  EnergyChange energy;
  std::vector<Finding> list;  // the changes found: kernels, compile, accuracy, energy
  bool fails() const;
};

// The dtype's machine epsilon (fp32 2^-23, fp16 2^-10, bf16 2^-7): the accuracy floor.
double accuracy_floor(core::DType dtype);

// The head side against the baseline, for a case of `dtype`.
Findings find_changes(const Traits& base, const Traits& head, core::DType dtype,
                      const FindingRules& rules);

}  // namespace attnprof::gate
