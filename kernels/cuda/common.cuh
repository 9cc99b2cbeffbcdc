// Device-side helpers shared by kernels/cuda's .cu files: fp16/bf16/fp32 element conversion,
// warp reductions, and the checked-call macro the host wrappers use (call text, error name and
// string, file:line).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda/attention.h"

namespace attnprof::kernels::cuda {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

__device__ __forceinline__ float warp_max(float x) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// log2(e): the fused kernels fold it into the scale and use exp2f.
constexpr float log2e = 1.4426950408889634f;

// Calls f with a value of the element type `t` names (float, __half, __nv_bfloat16).
template <typename F>
Status dispatch_dtype(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::f32: return f(float{});
    case ScalarType::f16: return f(__half{});
    case ScalarType::bf16: return f(__nv_bfloat16{});
  }
  return Status::unsupported("unknown dtype");
}

inline Status cuda_error(const char* call, cudaError_t e, const char* file, int line) {
  return Status::error(std::string(call) + ": " + cudaGetErrorName(e) + ": " +
                       cudaGetErrorString(e) + " (" + file + ":" + std::to_string(line) + ")");
}

}  // namespace attnprof::kernels::cuda

// Returns a Status::error from the enclosing function when a CUDA runtime call fails.
#define ATTNPROF_CUDA_TRY(call)                                                            \
  do {                                                                                     \
    const cudaError_t attnprof_e_ = (call);                                                \
    if (attnprof_e_ != cudaSuccess)                                                        \
      return ::attnprof::kernels::cuda::cuda_error(#call, attnprof_e_, __FILE__, __LINE__); \
  } while (0)

// After a <<<...>>> launch: a bad configuration shows up here, named after the kernel.
#define ATTNPROF_CUDA_LAUNCHED(kernel_name)                                                    \
  do {                                                                                         \
    const cudaError_t attnprof_e_ = cudaGetLastError();                                        \
    if (attnprof_e_ != cudaSuccess)                                                            \
      return ::attnprof::kernels::cuda::cuda_error("launch " kernel_name, attnprof_e_, __FILE__, \
                                                   __LINE__);                                  \
  } while (0)
