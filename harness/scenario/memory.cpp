// The memory a case needs, estimated from its shape (scenario.h, case_memory_bytes): what
// `validate` prints and what `run` checks against the machine before starting a case.
#include <algorithm>

#include "harness/scenario/scenario.h"

namespace attnprof::scenario {

double case_memory_bytes(const core::Case& c) {
  const auto& g = c.model;
  const double e = core::bytes_per_element(c.dtype);
  const double b = std::max(1, c.batch), sq = std::max(1, c.q_len), sk = std::max(1, c.kv_len);
  const double q = b * g.heads * sq * g.head_dim;          // the query, and the output alike
  const double kv = 2 * b * g.kv_heads * sk * g.head_dim;  // keys and values
  double bytes = e * (2 * q + kv);
  // The correctness check's reference (sdpa.math in fp32): copies of the inputs and output,
  // and its score and probability matrices, which the math and eager paths also hold.
  bytes += 4 * (2 * q + kv) + 4 * 2 * b * g.heads * sq * sk;
  if (c.mask != core::MaskKind::none) bytes += 4 * b * sq * sk;  // the mask, expanded
  if (c.level != core::Level::kernel) {
    const double tokens = b * sq;
    const double weights =
        g.hidden * (g.heads + 2.0 * g.kv_heads) * g.head_dim + g.heads * g.head_dim * g.hidden +
        (c.level == core::Level::layer ? g.hidden * g.mlp_hidden * (g.norm == "rmsnorm" ? 3.0 : 2.0)
                                       : 0.0);
    const double width =
        std::max<double>(g.hidden, c.level == core::Level::layer ? g.mlp_hidden : 0);
    // Weights, in the dtype and in the fp32 reference, and a few activations of the widest layer.
    bytes += (e + 4) * weights + (e + 4) * 4 * tokens * width;
  }
  return bytes;
}

}  // namespace attnprof::scenario
