// A test that cannot decide its outcome on this machine says why and is reported as skipped, not
// passed: ctest marks a test whose output holds "SKIPPED: " as skipped
// (cmake/DoctestAddTests.cmake). The caller returns right after, having checked nothing.
#pragma once

#include <cstdio>
#include <string>

namespace tests {

inline void report_skip(const std::string& why) {
  std::printf("SKIPPED: %s\n", why.c_str());
  std::fflush(stdout);
}

}  // namespace tests
