// attnprof bisect's commits and builds: the range between a good and a bad commit, and each
// commit checked out in a worktree of its own and built there, the way the CI gate builds a
// pull request's two sides (docs/ci.md: a repository's build command and plugins, or in
// attnprof's own repository each tree's attnprof build). Worktrees and builds are kept under
// one folder, a commit's build marked done only once it finished, so a later step, a bisect
// of a narrower range or one with a longer budget builds nothing twice; the compilers go
// through ccache, so what did not change between commits compiles once.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace attnprof::bisect {

struct Commit {
  std::string sha, subject;
};

// `git` with `args` in `repo`: its stdout, or util::EnvironmentError naming the command.
std::string git_in(const std::string& repo, const std::vector<std::string>& args);
// The repository's top level holding `dir` (util::InputError naming --repo when there is none).
std::string repo_root(const std::string& dir);
// Where bisect keeps its worktrees unless told: beside the repository's objects
// (<git common dir>/attnprof-bisect), so they outlive a bisect and stay out of the checkout.
std::string default_work_dir(const std::string& repo);
// attnprof's own repository (ci/build.sh and harness/ at its root): each commit is then an
// attnprof build of its own.
bool is_attnprof_repo(const std::string& repo);

// The good commit, then every commit after it up to the bad one along the bad commit's
// first-parent line, oldest first. util::InputError naming --good or --bad when either names
// no commit, or when the good one is not an ancestor of the bad one.
std::vector<Commit> commit_range(const std::string& repo, const std::string& good,
                                 const std::string& bad);

// How each commit is built: the CI gate's inputs (build-command, plugins).
struct BuildSpec {
  std::string repo, work;
  std::string build_command;         // empty: attnprof's own repository, ci/build.sh
  std::vector<std::string> plugins;  // paths relative to each tree, as the build makes them
  std::string torch_dir;             // the worker's LibTorch (its CMake folder)
};

struct Built {
  std::string tree;                  // the commit's worktree
  std::string worker;                // the tree's own attnprof build; empty: this attnprof's
  std::vector<std::string> plugins;  // absolute paths in the tree
  bool reused = false;               // an earlier step or bisect built it
  double seconds = 0;                // checking out and building, now
  std::string log;                   // the build's output
};

// What a build command runs with, as the gate gives it (ci/github/sides.sh, user_build): the
// worker's LibTorch on CMAKE_PREFIX_PATH and as Torch_DIR, that torch's Python first on PATH,
// ccache as the compilers' launcher where there is one (CCACHE_BASEDIR the tree), and the
// tree's path mapped away in what the compilers write (-ffile-prefix-map), so that two trees
// build the same bytes from the same code. NAME=VALUE each.
std::vector<std::string> build_environment(const BuildSpec& spec, const std::string& tree);

// `commit` checked out under spec.work and built there, unless a finished build of it with the
// same command is there already. util::InputError (exit 2) when the build command fails or a
// plugin is not where it says, naming the commit and the log; util::EnvironmentError when git
// or attnprof's own build fails.
Built build_commit(const BuildSpec& spec, const Commit& commit);

}  // namespace attnprof::bisect
