// docs/plugins.md's example, built and run exactly as the page says: its source, CMakeLists.txt
// and scenario are taken from the page's code blocks, and its shell block is run as written, with
// the built attnprof first on PATH. A page that drifts from what works fails here.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/torch/cli_helpers.h"

using namespace clitest;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fenced code blocks of a markdown page, in order: {language, body}.
std::vector<std::pair<std::string, std::string>> code_blocks(const std::string& md) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(md);
  std::string line, lang, body;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      if (inside) out.emplace_back(lang, body);
      else lang = line.substr(3), body.clear();
      inside = !inside;
    } else if (inside) {
      body += line + "\n";
    }
  }
  return out;
}

}  // namespace

TEST_CASE("docs/plugins.md: the example builds against attnprof's LibTorch and runs") {
  TempDir d;
  const auto blocks = code_blocks(read_file(ATTNPROF_SOURCE_DIR "/docs/plugins.md"));
  std::string script;
  int files = 0;
  for (const auto& [lang, body] : blocks) {
    // A file's block names it on its first line: "// my_attention.cpp" or "# CMakeLists.txt".
    static const std::regex named(R"(^(//|#) ([\w.]+\.(cpp|txt|yaml))\n)");
    std::smatch m;
    if (std::regex_search(body, m, named)) {
      d.write(m[2].str(), body);
      ++files;
    } else if (lang == "sh") {
      script += body;  // the build and run block, then the A/B block, run as one session
    }
  }
  REQUIRE(files == 3);
  REQUIRE(script.find("cmake --build build") != std::string::npos);
  REQUIRE(script.find("attnprof ab my_suite.yaml") != std::string::npos);
  d.write("run.sh", "set -e\n" + script);
  std::string env = "PATH='" ATTNPROF_BINARY_DIR "':\"$PATH\" ATTNPROF_DB=";
  const std::string nvcc = ATTNPROF_CUDA_COMPILER;
  if (!nvcc.empty()) {
    const std::string root = nvcc.substr(0, nvcc.rfind("/bin/"));
    env += " CUDAToolkit_ROOT='" + root + "' CUDACXX='" + nvcc + "'";
  }
  const std::string cmd = "cd '" + d.path.string() + "' && " + env + " bash run.sh 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  INFO(out);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(out.find("1 file OK, 4 cases") != std::string::npos);
  CHECK(out.find("4 cases: 4 ok, 0 failed, 0 skipped, 0 error") != std::string::npos);
  // The A/B of the two copies: both sides measured, no case failed, none regressed.
  CHECK(out.find("attnprof ab: 4 case(s)") != std::string::npos);
  CHECK(out.find("0 regression, 0 failed, 0 missing") != std::string::npos);
}
