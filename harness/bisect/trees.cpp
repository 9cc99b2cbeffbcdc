// attnprof bisect's commits and builds (trees.h): git in the repository, one worktree and one
// build per commit, kept and marked done.
#include "harness/bisect/trees.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/util/error.h"
#include "harness/util/machine.h"

namespace attnprof::bisect {
namespace fs = std::filesystem;
namespace {

struct Finished {
  int status = -1;  // the exit status; -1 when it could not start or died of a signal
  std::string out;  // stdout, unless it went to a log
};

// argv in `cwd` with `env` (NAME=VALUE) added. stdout is captured and stderr dropped, or both
// go to `log` when one is named.
Finished run_process(const std::vector<std::string>& argv, const std::string& cwd,
                     const std::vector<std::string>& env, const std::string& log = "") {
  int pipe_fd[2] = {-1, -1};
  if (log.empty() && pipe(pipe_fd) != 0) return {};
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    // A step's command (a checkout, a build) must not outlive bisect: killed, it leaves no
    // build running. Only the process it starts: a build tool's own children are its to end.
    util::die_with_parent(parent, 127);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
    for (const auto& e : env) putenv(strdup(e.c_str()));
    const int out =
        log.empty() ? pipe_fd[1] : open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = log.empty() ? open("/dev/null", O_WRONLY) : out;
    if (out < 0 || err < 0) _exit(127);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    const int in = open("/dev/null", O_RDONLY);
    if (in >= 0) dup2(in, STDIN_FILENO);
    if (log.empty()) close(pipe_fd[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  Finished f;
  if (log.empty()) {
    close(pipe_fd[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(pipe_fd[0], buf, sizeof buf)) > 0) f.out.append(buf, static_cast<size_t>(n));
    close(pipe_fd[0]);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) f.status = WEXITSTATUS(status);
  return f;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The last `n` lines of a log, for the message of a build that failed.
std::string tail(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : "\n") + lines[i];
  return out;
}

// The commit `rev` names in `repo`, in full, or util::InputError naming `option`.
std::string resolve(const std::string& repo, const std::string& rev, const char* option) {
  Finished f = run_process(
      {"git", "-C", repo, "rev-parse", "--verify", "--quiet", rev + "^{commit}"}, "", {});
  if (f.status != 0)
    throw util::InputError(
        util::Diagnostic{option, 0, 0, fmt::format("\"{}\" names no commit in {}", rev, repo)});
  return trimmed(f.out);
}

std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && access((fs::path(d) / name).c_str(), X_OK) == 0) return d + "/" + name;
  return "";
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string git_in(const std::string& repo, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  Finished f = run_process(argv, "", {});
  if (f.status != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw util::EnvironmentError(fmt::format("bisect: {} failed (exit {})", cmd, f.status));
  }
  return f.out;
}

std::string repo_root(const std::string& dir) {
  Finished f = run_process({"git", "-C", dir, "rev-parse", "--show-toplevel"}, "", {});
  if (f.status != 0)
    throw util::InputError(
        util::Diagnostic{"--repo", 0, 0, fmt::format("{} is not in a git repository", dir)});
  return trimmed(f.out);
}

std::string default_work_dir(const std::string& repo) {
  fs::path common = trimmed(git_in(repo, {"rev-parse", "--git-common-dir"}));
  if (common.is_relative()) common = fs::path(repo) / common;
  return (fs::weakly_canonical(common) / "attnprof-bisect").string();
}

bool is_attnprof_repo(const std::string& repo) {
  return fs::is_regular_file(fs::path(repo) / "ci/build.sh") &&
         fs::is_regular_file(fs::path(repo) / "harness/CMakeLists.txt");
}

std::vector<Commit> commit_range(const std::string& repo, const std::string& good,
                                 const std::string& bad) {
  const std::string g = resolve(repo, good, "--good"), b = resolve(repo, bad, "--bad");
  if (g == b)
    throw util::InputError(
        util::Diagnostic{"--bad", 0, 0, fmt::format("is the good commit itself ({})", good)});
  std::vector<Commit> range = {{g, trimmed(git_in(repo, {"log", "-1", "--format=%s", g}))}};
  std::stringstream lines(
      git_in(repo, {"log", "--reverse", "--first-parent", "--format=%H %s", g + ".." + b}));
  for (std::string line; std::getline(lines, line);)
    range.push_back({line.substr(0, line.find(' ')),
                     line.find(' ') == std::string::npos ? "" : line.substr(line.find(' ') + 1)});
  // Along the first-parent line, the commit after the good one has it as its first parent.
  if (range.size() < 2 || trimmed(git_in(repo, {"rev-parse", range[1].sha + "^1"})) != g)
    throw util::InputError(util::Diagnostic{
        "--good", 0, 0,
        fmt::format("{} is not on the first-parent line of {} ({}): name a good commit on it, "
                    "e.g. their merge base",
                    good, bad, b.substr(0, 12))});
  return range;
}

std::vector<std::string> build_environment(const BuildSpec& spec, const std::string& tree) {
  std::vector<std::string> env;
  if (!spec.torch_dir.empty()) {
    const fs::path torch_dir = spec.torch_dir;
    // <venv>/lib/pythonX/site-packages/torch/share/cmake/Torch: share/cmake, and the venv.
    fs::path venv = torch_dir;
    for (int up = 0; up < 7; ++up) venv = venv.parent_path();
    const std::string prefix = torch_dir.parent_path().string();
    const std::string prefix_path = env_or_empty("CMAKE_PREFIX_PATH");
    env.push_back("CMAKE_PREFIX_PATH=" + prefix + (prefix_path.empty() ? "" : ":" + prefix_path));
    env.push_back("Torch_DIR=" + spec.torch_dir);
    env.push_back("PATH=" + (venv / "bin").string() + ":" + env_or_empty("PATH"));
  }
  if (!on_path("ccache").empty() && env_or_empty("CMAKE_CXX_COMPILER_LAUNCHER").empty()) {
    for (const char* lang : {"C", "CXX", "CUDA"})
      env.push_back(fmt::format("CMAKE_{}_COMPILER_LAUNCHER=ccache", lang));
    env.push_back("CCACHE_BASEDIR=" + tree);
  }
  const std::string map = "-ffile-prefix-map=" + tree + "=.";
  env.push_back("CFLAGS=" + map + " " + env_or_empty("CFLAGS"));
  env.push_back("CXXFLAGS=" + map + " " + env_or_empty("CXXFLAGS"));
  env.push_back("CUDAFLAGS=-Xcompiler=" + map + " " + env_or_empty("CUDAFLAGS"));
  return env;
}

Built build_commit(const BuildSpec& spec, const Commit& commit) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string id = commit.sha.substr(0, 12);
  const fs::path work = spec.work, tree = work / id, stamp = work / (id + ".built");
  Built b;
  b.tree = tree.string();
  b.log = (work / (id + ".log")).string();
  fs::create_directories(work);
  if (!fs::exists(tree / ".git")) {
    git_in(spec.repo, {"worktree", "prune"});
    fs::remove_all(tree);
    git_in(spec.repo, {"worktree", "add", "--detach", "--quiet", b.tree, commit.sha});
  }
  const bool own = spec.build_command.empty();
  if (own) b.worker = (tree / "build/attnprof-worker").string();
  for (const auto& p : spec.plugins) b.plugins.push_back((tree / p).string());
  // What the build was: a finished one of the same is reused, anything else builds again.
  std::string want =
      own ? "ci/build.sh attnprof attnprof-worker\n"
          : "build-command: " + spec.build_command + "\ntorch: " + spec.torch_dir + "\n";
  for (const auto& p : spec.plugins) want += "plugin: " + p + "\n";
  bool reusable = fs::exists(stamp) && read_file(stamp) == want;
  for (const auto& p : b.plugins) reusable = reusable && fs::exists(p);
  if (own) reusable = reusable && fs::exists(b.worker);
  if (reusable) {
    b.reused = true;
    return b;
  }
  fs::remove(stamp);
  Finished f = own ? run_process({"bash", "ci/build.sh", "attnprof", "attnprof-worker"}, b.tree,
                                 {"ATTNPROF_BUILD=" + (tree / "build").string()}, b.log)
                   : run_process({"bash", "-euo", "pipefail", "-c", spec.build_command}, b.tree,
                                 build_environment(spec, b.tree), b.log);
  if (f.status != 0) {
    // A diagnostic is one line; the log's last lines, which say why, go above it.
    fmt::print(stderr, "bisect: the end of {}:\n{}\n", b.log, tail(read_file(b.log), 15));
    const std::string what =
        fmt::format("commit {} ({}) does not build: {} exited {} (its log: {})", id, commit.subject,
                    own ? "ci/build.sh" : spec.build_command, f.status, b.log);
    if (own) throw util::EnvironmentError("bisect: " + what);
    throw util::InputError(util::Diagnostic{"--build-command", 0, 0, what});
  }
  for (std::size_t i = 0; i < b.plugins.size(); ++i)
    if (!fs::exists(b.plugins[i]))
      throw util::InputError(util::Diagnostic{
          "--plugins", 0, 0,
          fmt::format("{} is not in the tree of commit {} ({}) after its build command; give "
                      "paths relative to the repository root, as the build makes them",
                      spec.plugins[i], id, b.tree)});
  std::ofstream(stamp) << want;
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

}  // namespace attnprof::bisect
