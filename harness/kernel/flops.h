// The one FLOP definition every kernel's TFLOP/s is computed from (docs/scenarios.md, "FLOPs"):
// useful FLOPs, 4*D per query head per query-key pair the case's mask leaves visible (QK^T and
// PV, 2 FLOPs per multiply-add), counted exactly from the element mask: causal, sliding window,
// prefix-LM, documents and padding; a custom mask file counts in full (its zeros are data, not
// structure). What a kernel executes beyond that (a block-sparse kernel computes every element
// of each block it does not skip) is its own figure, flops.executed, beside it. Torch-free: the
// worker's roofline, the shard cost model and the tests use this one count.
#pragma once

#include "harness/core/types.h"

namespace attnprof::kernel {

// Visible query-key pairs, summed over the batch, for one query head: for each sequence b with
// valid keys L_b (seq_lens under padding, else kv_len) and each query at position p (prefill:
// query i at i; decode: the queries are the last Sq of the L_b keys), the keys k < L_b that
//   none, padding, custom: all;  causal: k <= p;  sliding_window W: p - W < k <= p;
//   prefix P: k < P or k <= p;  document: k in p's document.
double attention_pairs(const core::Case&);

// Useful FLOPs of the attention forward: 4 * heads * head_dim * attention_pairs.
double attention_flops(const core::Case&);

}  // namespace attnprof::kernel
