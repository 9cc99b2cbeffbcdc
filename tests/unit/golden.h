// Golden files for the unit tests (report_fixtures.h's reports, test_schema.cpp's layouts): a
// text compared with tests/data/golden/<name>, which is the specification.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace attnprof::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Compares `actual` with tests/data/golden/<name>. ATTNPROF_UPDATE_GOLDEN=1 rewrites the file
// instead (then review the diff: the golden file is the specification).
inline void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(ATTNPROF_TEST_DATA) + "/golden/" + name;
  if (const char* u = std::getenv("ATTNPROF_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  const std::string expected = read_text(path);
  INFO("golden file ", path, " (ATTNPROF_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(actual == expected);
}

}  // namespace attnprof::testing
