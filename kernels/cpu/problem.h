// A self-contained attention problem on the host: a shape and mask description, deterministic
// random q, k, v in the problem's dtype, the mask data it implies (seq_lens, additive mask,
// cu_seqlens for packed sequences), an output buffer, and the AttentionParams that point at
// them. The unit tests, the device tests (which copy the buffers to the GPU) and the benchmarks
// all build their inputs here, so they agree on what "padding" or "varlen" means.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention_params.h"

namespace attnprof::kernels::cpu {

struct ProblemShape {
  int batch = 1, heads_q = 1, heads_kv = 1, seq_q = 1, seq_k = 1, head_dim = 64;
  ScalarType dtype = ScalarType::f32;
  bool causal = false;
  int window = 0;            // sliding window (implies causal)
  bool padding = false;      // seq_lens: sequence b keeps fewer keys (the first keeps all)
  bool custom_mask = false;  // random additive mask with -inf holes and one fully masked row
  bool varlen = false;       // packed sequences of different lengths (cu_seqlens), [total, H, D]
  std::uint64_t seed = 1;

  std::string name() const;  // "b2 h8/2 s37x37 d64 fp16 causal w16 pad mask varlen"
};

struct Problem {
  ProblemShape shape;
  std::vector<unsigned char> q, k, v, o;        // raw elements of shape.dtype
  std::vector<int> seq_lens;                    // [B] when padding
  std::vector<float> mask;                      // [B, 1, Sq, Sk] when custom_mask
  std::vector<int> cu_seqlens_q, cu_seqlens_k;  // [B+1] when varlen
  int total_q = 0, total_k = 0;                 // rows of the packed tensors when varlen

  // Params over this problem's host buffers (o included).
  AttentionParams params();
  // o as fp32, in its own layout.
  std::vector<float> output() const;
};

Problem make_problem(const ProblemShape& shape);

// Largest |a - b| over two equally long vectors (inf if the lengths differ, nan is reported as
// inf too, so a NaN never passes a tolerance check).
double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b);

// Tolerance for comparing a kernel's output with naive_forward's on the same inputs: one or two
// roundings of the output to the dtype plus fp32 accumulation order.
double tolerance(ScalarType t);

}  // namespace attnprof::kernels::cpu
