// The cost matrix as text, laid out like torch.profiler's key_averages().table(): a dashed rule,
// a header, one line per row, totals underneath. People who profile PyTorch read their
// bottlenecks off that table, so they read ours without a legend.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"
#include "harness/costmatrix/cost_matrix.h"

namespace attnprof::costmatrix {

// sort_by: a column key, ours or torch's spelling:
//   cpu_self (self_cpu_time_total), cpu_total (cpu_time_total),
//   device_self (self_cuda_time_total, self_device_time_total),
//   device_total (cuda_time_total, device_time_total), calls (count),
//   bytes (self_cpu_memory_usage), share, launches, copies (memcpys and memsets), name;
// empty: device_self when any row has device time, else cpu_self. Largest first (name: A to Z).
// row_limit <= 0: all rows. Device columns appear only when a row has device time, input shapes
// only when a row has them. Throws std::invalid_argument naming the valid keys on a bad key.
// width > 0: columns are left out, least telling first (util::columns_that_fit), until the table
// fits that many columns, and a line under it names them; 0: every column.
std::string render_table(const std::vector<core::CostRow>& rows, std::string_view sort_by,
                         int row_limit, std::size_t width = 0);

// The kernel view: kernel, op, calls, total, avg, min, max, grid, block, registers, shared memory.
std::string render_kernels(const Kernels& k, int row_limit, std::size_t width = 0);

// torch's time format: "12.345us", "1.234ms", "2.000s". Sizes are util::format_bytes's, as in
// every other table ("1.50 MiB", "512 B").
std::string format_time_ns(double ns);

}  // namespace attnprof::costmatrix
