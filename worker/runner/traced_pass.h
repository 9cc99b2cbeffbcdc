// The traced pass: measure.trace_calls more warm calls of the case's workload, separate from the
// timed samples, under the CPU tracer (and CUPTI on a GPU). It fills the case's cost matrix, its
// roofline figures and bound classification, and for block and layer cases the attention share.
// On the CPU a pass whose calls ran in another state of the machine than the samples (see
// costmatrix::same_state) is traced again, up to three passes ("trace.passes").
#pragma once

#include <ATen/ATen.h>

#include <functional>

#include "harness/core/types.h"
#include "harness/env/environment.h"

namespace attnprof::runner {

struct TraceOptions {
  std::string perfetto_dir;        // also write the trace there as Chrome/Perfetto JSON
  bool hardware_counters = false;  // DRAM bytes via the range profiler (a second pass, GPU only)
  // Block and layer cases: the attention scope's share of the call. Off where the variant is the
  // whole block or layer (a compiled package, a py: module): its scope is the whole call, not
  // attention; its share is then its own attention ops' (costmatrix::is_attention_op), if any.
  bool attention_share = true;
};

void traced_pass(const core::Case& c, const env::Description& env,
                 const std::function<at::Tensor()>& work, core::CaseResult& r,
                 const TraceOptions& options = {});

}  // namespace attnprof::runner
