// trace::device_tracing_available on a machine without a GPU, and the guarantee the runner
// relies on: the check itself calls no CUPTI function and does not crash.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include "worker/trace/cupti_tracer.h"

using namespace attnprof;

TEST_SUITE("trace::CuptiTracer") {
  TEST_CASE("availability agrees with cudaGetDeviceCount and says why not") {
    int count = 0;
    const bool gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    std::string why;
    CHECK(trace::device_tracing_available(&why) == gpu);
    if (gpu) {
      CHECK(why.empty());
    } else {
      CHECK(why.rfind("no GPU: cudaGetDeviceCount", 0) == 0);
      CHECK(why.size() > std::string("no GPU: cudaGetDeviceCount").size());
    }
    // Null is allowed for callers that only want the answer.
    CHECK(trace::device_tracing_available(nullptr) == gpu);
  }

  TEST_CASE("CUPTI error strings name the error") {
    CHECK(trace::cupti_error_string(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) ==
          "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  }

  TEST_CASE("a libcupti of an older major version than the headers is refused, with the reason") {
    CHECK_FALSE(trace::cupti_version_problem(130001, 130001));
    CHECK_FALSE(trace::cupti_version_problem(130100, 130001));  // newer
    CHECK_FALSE(trace::cupti_version_problem(130000, 130001));  // older patch, same layouts
    CHECK(trace::cupti_version_problem(26, 130001) ==
          "libcupti reports API version 26, older than the version 130001 attnprof was built "
          "with: its activity records would be misread (use the CUPTI of the CUDA toolkit "
          "attnprof was built with, or a newer one)");
    CHECK(trace::cupti_version_problem(120800, 130001));
  }
}
