// bisect's commits and builds on a real git repository made for the test: the range in order,
// the errors that name the option, a build in its own worktree, kept and reused, and a build
// that fails or makes no plugin named by its commit.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/bisect/trees.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;
namespace fs = std::filesystem;

namespace {

// A repository of `n` commits, "commit 0" .. "commit n-1", each writing its number to n.txt;
// the SHAs oldest first.
std::vector<std::string> make_repo(const std::string& dir, int n) {
  auto sh = [&](const std::string& cmd) {
    REQUIRE(std::system(fmt::format("cd '{}' && {} >/dev/null 2>&1", dir, cmd).c_str()) == 0);
  };
  fs::create_directories(dir);
  sh("git init -q -b main && git config user.name t && git config user.email t@example.com");
  for (int i = 0; i < n; ++i)
    sh(fmt::format("echo {} > n.txt && git add n.txt && git commit -q -m 'commit {}'", i, i));
  std::vector<std::string> shas;
  for (int i = n - 1; i >= 0; --i)
    shas.push_back(bisect::git_in(dir, {"rev-parse", fmt::format("HEAD~{}", i)}).substr(0, 40));
  return shas;
}

// A repository of `n` commits in `tmp`, and the spec that builds its commits under tmp/work.
struct Fixture {
  testing::TempDir tmp;
  std::vector<std::string> shas;
  bisect::BuildSpec spec;
  explicit Fixture(int n) {
    spec.repo = tmp.file("repo");
    spec.work = tmp.file("work");
    shas = make_repo(spec.repo, n);
  }
};

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const util::InputError& e) {
    return e.diagnostics().at(0).to_string();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("bisect::trees") {
  TEST_CASE("the range is the good commit, then each commit after it up to the bad one") {
    testing::TempDir tmp;
    const std::string repo = tmp.file("repo");
    const auto shas = make_repo(repo, 5);
    const auto range = bisect::commit_range(repo, "HEAD~3", "HEAD");
    REQUIRE(range.size() == 4);
    CHECK(range[0].sha == shas[1]);
    CHECK(range[0].subject == "commit 1");
    CHECK(range[3].sha == shas[4]);
    CHECK(range[3].subject == "commit 4");
    CHECK(input_error([&] { bisect::commit_range(repo, "nope", "HEAD"); }) ==
          fmt::format("--good: \"nope\" names no commit in {}", repo));
    CHECK(input_error([&] { bisect::commit_range(repo, "HEAD", "HEAD~2"); }) ==
          fmt::format("--good: HEAD is not on the first-parent line of HEAD~2 ({}): name a good "
                      "commit on it, e.g. their merge base",
                      shas[2].substr(0, 12)));
    CHECK(input_error([&] { bisect::commit_range(repo, "HEAD", "HEAD"); }) ==
          "--bad: is the good commit itself (HEAD)");
    CHECK(bisect::repo_root(repo + "/.") == fs::canonical(repo).string());
    CHECK(input_error([&] { bisect::repo_root(tmp.path.string()); }) ==
          fmt::format("--repo: {} is not in a git repository", tmp.path.string()));
  }

  TEST_CASE("a commit builds in its own worktree once, and its build is reused") {
    Fixture f(3);
    auto& [tmp, shas, spec] = f;
    spec.build_command = "mkdir -p out && cp n.txt out/lib.so && echo built >> ../builds.txt";
    spec.plugins = {"out/lib.so"};
    const bisect::Commit c{shas[1], "commit 1"};
    const bisect::Built b = bisect::build_commit(spec, c);
    CHECK_FALSE(b.reused);
    CHECK(b.tree == spec.work + "/" + shas[1].substr(0, 12));
    REQUIRE(b.plugins.size() == 1);
    CHECK(testing::read_bytes(b.plugins[0]) == "1\n");  // the commit's own file, not HEAD's
    CHECK(b.worker.empty());
    const bisect::Built again = bisect::build_commit(spec, c);
    CHECK(again.reused);
    CHECK(testing::read_bytes(spec.work + "/builds.txt") == "built\n");
    // Another command is another build.
    spec.build_command += " && true";
    CHECK_FALSE(bisect::build_commit(spec, c).reused);
    CHECK(testing::read_bytes(spec.work + "/builds.txt") == "built\nbuilt\n");
  }

  TEST_CASE("a build command that fails, or makes no plugin, names the commit") {
    Fixture f(2);
    auto& [tmp, shas, spec] = f;
    spec.build_command = "echo compiling; echo 'kernel.cpp:3: error: expected ;' >&2; exit 4";
    const bisect::Commit c{shas[0], "commit 0"};
    const std::string id = shas[0].substr(0, 12);
    CHECK(input_error([&] { bisect::build_commit(spec, c); }) ==
          fmt::format("--build-command: commit {} (commit 0) does not build: {} exited 4 (its "
                      "log: {}/{}.log)",
                      id, spec.build_command, spec.work, id));
    CHECK(testing::read_bytes(spec.work + "/" + id + ".log") ==
          "compiling\nkernel.cpp:3: error: expected ;\n");
    spec.build_command = "true";
    spec.plugins = {"build/libk.so"};
    CHECK(input_error([&] { bisect::build_commit(spec, c); }) ==
          fmt::format("--plugins: build/libk.so is not in the tree of commit {} ({}/{}) after "
                      "its build command; give paths relative to the repository root, as the "
                      "build makes them",
                      id, spec.work, id));
    // Nothing was marked built.
    CHECK_FALSE(fs::exists(spec.work + "/" + id + ".built"));
  }

  TEST_CASE("a build command runs with the worker's LibTorch and the tree's path mapped away") {
    bisect::BuildSpec spec;
    spec.torch_dir = "/venv/lib/python3.11/site-packages/torch/share/cmake/Torch";
    const auto env = bisect::build_environment(spec, "/w/abc");
    auto has = [&](const std::string& prefix) {
      for (const auto& e : env)
        if (e.rfind(prefix, 0) == 0) return true;
      return false;
    };
    CHECK(has("CMAKE_PREFIX_PATH=/venv/lib/python3.11/site-packages/torch/share/cmake"));
    CHECK(has("Torch_DIR=/venv/lib/python3.11/site-packages/torch/share/cmake/Torch"));
    CHECK(has("PATH=/venv/bin:"));
    CHECK(has("CXXFLAGS=-ffile-prefix-map=/w/abc=."));
    CHECK(has("CUDAFLAGS=-Xcompiler=-ffile-prefix-map=/w/abc=."));
  }
}
