// The lines under a case's cost matrix (`attnprof show --case`, the HTML reports): what the case
// ran, how close its output came to the reference, and what its measured calls did to memory
// (core/metric_names.h). Each line is there only when the case recorded its figures.
//
//   kernels   12 ATen ops: aten::_scaled_dot_product_flash_attention_for_cpu, ... (backend flash)
//   accuracy  max abs error 4.77e-07, mean abs error 3.12e-08 against sdpa.math
//   memory    over 412 calls: resident set +0 B; 0.00 minor and 0.00 major page faults per call
//   memory    CUDA allocator over 412 calls: reserved peak 24.00 MiB, allocated peak 18.00 MiB
//             (1.33x), 0 retries, 3 segments
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "harness/core/types.h"

namespace attnprof::costmatrix {

// One line per recorded part, each ending in '\n', wrapped at `width` columns (0: not) under its
// label; "" when none is.
std::string render_summary(const core::CaseResult& r, std::size_t width = 0);

// A memory figure (core::kFragmentationMetrics) in its unit: "1.50 MiB", "8448.2" faults per
// call, "1.33x", a count.
std::string format_memory(const std::string& metric, double value);

}  // namespace attnprof::costmatrix
