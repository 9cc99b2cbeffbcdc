// The results table of a run, as `attnprof run` prints it: one row per case.
#pragma once

#include <string>

#include "harness/core/types.h"

namespace attnprof::report {

std::string results_table(const core::Run& run);
// "12 cases: 10 ok, 1 failed, 1 skipped, 0 error"
std::string status_counts(const core::Run& run);

}  // namespace attnprof::report
