// The traced pass: one more call of the case's workload, separate from the timed samples, under
// the CPU tracer (and CUPTI on a GPU). It fills the case's cost matrix, its roofline figures and
// bound classification, and for block and layer cases the attention share.
#pragma once

#include <ATen/ATen.h>

#include <functional>

#include "harness/core/types.h"
#include "harness/env/environment.h"

namespace attnprof::runner {

// With a perfetto_dir, the trace is also written there as a Chrome/Perfetto JSON file.
void traced_pass(const core::Case& c, const env::Description& env,
                 const std::function<at::Tensor()>& work, core::CaseResult& r,
                 const std::string& perfetto_dir = "");

}  // namespace attnprof::runner
