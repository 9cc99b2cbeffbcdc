// What moved between two cost matrices of one case (attnprof ab's base and head): per op and per
// kernel, the self and total time, calls and memory of each side, worst change first. The gate
// says *that* a case got slower; this says *which op* did, in the same report.
#pragma once

#include <string>
#include <vector>

#include "harness/core/types.h"

namespace attnprof::costmatrix {

struct DiffRow {
  std::string what;    // op name with its input shapes, or "kernel <name>"
  bool kernel = false;  // a kernel row (device time of every launch of that kernel)
  double base_self_ns = 0, head_self_ns = 0;    // device self where there is device time, else CPU
  double base_total_ns = 0, head_total_ns = 0;  // likewise, inclusive of child ops
  int base_calls = 0, head_calls = 0;
  std::int64_t base_bytes = 0, head_bytes = 0;  // bytes allocated
  double delta_ns() const { return head_self_ns - base_self_ns; }
};

// Rows present on either side, ops matched by (op, input shapes, parent), kernels by name;
// sorted by |change in self time|, largest first. Rows that did not change at all are left out.
std::vector<DiffRow> diff(const std::vector<core::CostRow>& base,
                          const std::vector<core::CostRow>& head);

// A plain-text table of the first `rows` rows; "" when there are none.
std::string render_diff(const std::vector<DiffRow>& rows, int max_rows = 10);
// The same as a markdown table.
std::string render_diff_markdown(const std::vector<DiffRow>& rows, int max_rows = 10);

}  // namespace attnprof::costmatrix
