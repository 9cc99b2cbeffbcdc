// attnprof's CPU attention kernels on raw pointers (kernels/attention_params.h has the layout,
// the masking rules and the varlen convention). All pointers in the params are host pointers.
//   naive_forward: the reference. Materializes each head's scores, accumulates in double; slow
//                  and obviously right, so every other kernel is checked against it.
//   flash_forward: tiled online softmax in the FlashAttention-2 manner, fp32 accumulation,
//                  SIMD tiles, multi-threaded over (batch, kv head, query positions).
#pragma once

#include "kernels/attention_params.h"

namespace attnprof::kernels::cpu {

Status naive_forward(const AttentionParams& p);

// Tile sizes of flash_forward: query rows per work item (all query heads of a kv head's group
// at max(1, flash_item_rows / group) positions), keys per inner step.
inline constexpr int flash_item_rows = 256;
inline constexpr int flash_block_k = 64;

// The SIMD tile routines flash_forward has: portable (128-bit vector extensions: SSE2 on
// x86-64, NEON on aarch64), avx2 (256-bit with FMA), avx512 (512-bit, AVX-512F).
enum class Simd { portable, avx2, avx512 };
const char* to_string(Simd);
Simd best_simd();  // the widest this CPU and OS support; what flash_forward uses

// threads <= 0: std::thread::hardware_concurrency(). threads == 1 runs on the calling thread.
Status flash_forward(const AttentionParams& p, int threads);
// The same with the given tile routine (tests run each); unsupported, and nothing run, if it is
// wider than `widest`, what the CPU has (a test gives a narrower one to see the refusal on a CPU
// that has every routine).
Status flash_forward(const AttentionParams& p, int threads, Simd simd, Simd widest = best_simd());

// The run-queue wait of flash_forward's helper threads, which it starts per call and which exit
// with it, summed over every call so far (each reads its own schedstat as it ends, the wait
// before it first ran included). A thread that exits takes its /proc/self/task/TID/schedstat
// with it; the CPU timer adds this to what the live threads show, so that a call slowed by a
// busy machine is seen as descheduled (core/stability.h).
std::int64_t exited_threads_wait_ns();

}  // namespace attnprof::kernels::cpu
