// Shared by the GPU tests: the skip where there is no GPU, and a checked CUDA call. Include
// after doctest (or tests/torch/torch_doctest.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>

namespace attnprof::device_test {

// False, with a "SKIPPED: no GPU (...)" line that ctest reports as a skip
// (SKIP_REGULAR_EXPRESSION in cmake/DoctestAdd.cmake), when no CUDA device can be used.
inline bool have_gpu() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::printf("SKIPPED: no GPU (cudaGetDeviceCount: %s)\n",
                e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    cudaGetLastError();  // leave no error behind for the next test
    return false;
  }
  return true;
}

}  // namespace attnprof::device_test

#define CUDA_REQUIRE(call)                                                       \
  do {                                                                           \
    const cudaError_t e_ = (call);                                               \
    REQUIRE_MESSAGE(e_ == cudaSuccess, #call << ": " << cudaGetErrorString(e_)); \
  } while (0)
