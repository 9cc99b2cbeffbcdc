// Runs the built attnprof executables as a user does, for the end-to-end tests.
#pragma once

#include <doctest/doctest.h>
#include <ftw.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace clitest {

namespace fs = std::filesystem;

struct Result {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

// Runs `command` (a shell fragment) in `dir`, with $ATTNPROF_DB unset and $COLUMNS empty (tables
// 120 wide, whatever the terminal the tests run from; a command may set COLUMNS itself).
inline Result shell_in(const fs::path& dir, const std::string& command) {
  const std::string cmd = "cd '" + dir.string() + "' && ATTNPROF_DB= COLUMNS= " + command + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs the built attnprof in `dir` with `args` (a shell fragment).
inline Result attnprof(const fs::path& dir, const std::string& args) {
  return shell_in(dir, "'" ATTNPROF_BINARY_DIR "/attnprof' " + args);
}

// Runs the built attnprof-worker by hand, its protocol input empty (it exits when stdin ends).
inline Result worker(const fs::path& dir, const std::string& args) {
  return shell_in(dir, "'" ATTNPROF_BINARY_DIR "/attnprof-worker' " + args + " </dev/null");
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/attnprof-cli-XXXXXX";
    path = mkdtemp(tmpl);
  }
  // Not std::filesystem::remove_all: libtorch.so exports its own copy of it, which the dynamic
  // linker binds first and which crashes (LibTorch 2.11 wheel). nftw does the same job.
  ~TempDir() {
    nftw(
        path.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return remove(p); },
        16, FTW_DEPTH | FTW_PHYS);
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

}  // namespace clitest
