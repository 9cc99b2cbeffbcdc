// attnprof's CPU attention kernels on raw pointers (kernels/attention_params.h has the layout,
// the masking rules and the varlen convention). All pointers in the params are host pointers.
//   naive_forward: the reference. Materializes each head's scores, accumulates in double; slow
//                  and obviously right, so every other kernel is checked against it.
//   flash_forward: tiled online softmax in the FlashAttention-2 manner, fp32 accumulation,
//                  multi-threaded over (batch, head, query tile).
#pragma once

#include "kernels/attention_params.h"

namespace attnprof::kernels::cpu {

Status naive_forward(const AttentionParams& p);

// Tile sizes of flash_forward: query rows per work item, keys per inner step.
inline constexpr int flash_block_q = 32;
inline constexpr int flash_block_k = 64;

// threads <= 0: std::thread::hardware_concurrency(). threads == 1 runs on the calling thread.
Status flash_forward(const AttentionParams& p, int threads);

}  // namespace attnprof::kernels::cpu
