// attnprof's CUDA attention kernels on raw device pointers (kernels/attention_params.h has the
// layout, masking rules and varlen convention; every pointer in the params, seq_lens, mask and
// cu_seqlens included, is a device pointer). Plain C++ header: no LibTorch, no CUDA C++ beyond
// cudaStream_t, so host code (adapters, tests) includes it with the host compiler.
//
//   1. naive_forward   three kernels (S = QK^T * scale + mask, row softmax, O = PV) through a
//                      materialized fp32 score matrix in a caller-provided workspace.
//   2. flash_forward   one fused kernel in the FlashAttention-2 manner: a block owns 64 query
//                      rows of one head, walks key tiles of 32 with online softmax, fp32
//                      accumulation; head_dim 64 or 128; fp16, bf16 (and fp32) in and out.
//   3. decode_forward  flash-decoding for Sq <= 16 against a KV cache: the keys are split
//                      across blocks, each writes a partial (max, sum, output), a second kernel
//                      combines them.
//   4. varlen_forward  flash_forward over packed sequences (cu_seqlens_q/k set).
//
// Every entry point returns Status: unsupported (with the reason) for configurations it does not
// take, error with the failed CUDA call and its error string, else ok. Launches are
// asynchronous on `stream`; nothing synchronizes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/attention_params.h"

namespace attnprof::kernels::cuda {

// 1. naive
std::size_t naive_workspace_bytes(const AttentionParams& p);  // B * Hq * Sq * Sk floats
Status naive_supports(const AttentionParams& p);
Status naive_forward(const AttentionParams& p, void* workspace, cudaStream_t stream);

// 2. flash (and 4. varlen, the same kernel over packed sequences)
inline constexpr int flash_block_q = 64;
inline constexpr int flash_block_k = 32;
Status flash_supports(const AttentionParams& p);  // head_dim 64 or 128, strides
Status flash_forward(const AttentionParams& p, cudaStream_t stream);
Status varlen_forward(const AttentionParams& p, cudaStream_t stream);  // needs cu_seqlens_q/k

// 3. decode
inline constexpr int decode_max_seq_q = 16;
Status decode_supports(const AttentionParams& p);  // seq_q <= 16, head_dim 64/128, 16 B rows
// How many blocks share one (batch, head)'s keys: enough blocks to fill `sm_count`
// multiprocessors twice over, at least 128 keys per block, at most 64 splits.
int decode_splits(const AttentionParams& p, int sm_count);
std::size_t decode_workspace_bytes(const AttentionParams& p, int splits);
Status decode_forward(const AttentionParams& p, int splits, void* workspace, cudaStream_t stream);

}  // namespace attnprof::kernels::cuda
