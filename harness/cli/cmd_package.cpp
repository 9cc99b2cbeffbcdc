// attnprof package FILE.py:NAME --scenario S.yaml -o OUT.pt2 [--arg NAME=VALUE]... [--force]:
// packages a user's own attention module for the cases of a scenario that name OUT, as their
// kernel (at their dtype) or as their reference (in fp32, the module's fp32 twin). It runs the
// packaging script (ci/aoti-package.py, compiled in) with the python whose torch attnprof-worker
// links, and says which first: a package runs only in the LibTorch of the torch that made it.
// $ATTNPROF_PYTHON names another python. The script's exit code is the command's, once it has
// decided one; a python that ends before (the module calls os._exit, or crashes, while imported,
// called or exported) is named with what it was doing and the module's file.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/package_run.h"
#if __has_include("attnprof/torch_source.h")
#include "attnprof/torch_source.h"
#else
#define ATTNPROF_TORCH_SOURCE "no LibTorch"
#define ATTNPROF_TORCH_PYTHON ""
#define ATTNPROF_TORCH_PACKAGE_VERSION "none"
#endif

namespace attnprof::cli {

std::string_view embedded_packager();  // ci/aoti-package.py (harness/cli/CMakeLists.txt)

namespace {

namespace fs = std::filesystem;

struct PackageArgs {
  std::string module, scenario, output;
  std::vector<std::string> args;
  bool force = false;
};

// The python to package with, and the line that says which.
std::pair<std::string, std::string> packaging_python() {
  if (const char* p = std::getenv("ATTNPROF_PYTHON"); p && *p)
    return {p, fmt::format("packaging with {} (ATTNPROF_PYTHON; attnprof-worker links torch {}: "
                           "a package from another torch version is refused)",
                           p, ATTNPROF_TORCH_PACKAGE_VERSION)};
  const std::string built = ATTNPROF_TORCH_PYTHON;
  std::error_code ec;
  if (built.empty() || !fs::exists(built, ec))
    throw util::EnvironmentError(
        fmt::format("no python to package with: this attnprof was built against {} ({}){}; set "
                    "ATTNPROF_PYTHON to a python with torch {}",
                    ATTNPROF_TORCH_SOURCE, ATTNPROF_TORCH_PACKAGE_VERSION,
                    built.empty() ? "" : fmt::format(", whose python {} is gone", built),
                    ATTNPROF_TORCH_PACKAGE_VERSION));
  return {built, fmt::format("packaging with {} (torch {}, the torch attnprof-worker links)", built,
                             ATTNPROF_TORCH_PACKAGE_VERSION)};
}

int package(const PackageArgs& a) {
  const auto [python, said] = packaging_python();
  fmt::print("{}\n", said);
  // The script, written where this command alone reads it, and removed after.
  char dir_template[] = "/tmp/attnprof-package-XXXXXX";
  if (!mkdtemp(dir_template))
    throw util::EnvironmentError("attnprof package: cannot make a folder under /tmp");
  const fs::path dir = dir_template;
  const fs::path script = dir / "aoti-package.py";
  const fs::path status = dir / "status";
  std::ofstream(script) << embedded_packager();
  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  std::vector<std::string> argv{
      python,   script.string(), a.scenario, "--module", a.module,       "-o",
      a.output, "--attnprof",    self,       "--status", status.string()};
  for (const auto& arg : a.args) argv.insert(argv.end(), {"--arg", arg});
  if (a.force) argv.push_back("--force");
  // Removed whatever the outcome: the folder is this command's alone.
  struct Cleanup {
    const fs::path& dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{dir};
  return run_packaging(argv, status);
}

}  // namespace

Action setup_package(CLI::App& sub) {
  auto a = std::make_shared<PackageArgs>();
  sub.add_option("module", a->module,
                 "FILE.py:NAME: an nn.Module class, or a function returning one")
      ->required();
  sub.add_option("--scenario", a->scenario, "The scenario whose cases name the package")
      ->required();
  sub.add_option("-o,--output", a->output,
                 "The package to make: a path the scenario names as aoti:PATH.pt2 (a kernel, "
                 "or a reference, then made in fp32)")
      ->required();
  sub.add_option("--arg", a->args, "NAME=VALUE for the module's constructor (VALUE as JSON)");
  sub.add_flag("--force", a->force, "Make the package anew, cache or not");
  return [a] { return package(*a); };
}

}  // namespace attnprof::cli
