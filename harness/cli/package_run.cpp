// Running the packaging script (package_run.h): its exit code once it decided one, else what
// ended it, and where.
#include "harness/cli/package_run.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "harness/util/error.h"
#include "harness/util/machine.h"

namespace attnprof::cli {
namespace {

namespace fs = std::filesystem;

// Runs argv, returning its wait status (an exit status 3 when it could not start).
int run_child(const std::vector<std::string>& argv) {
  std::vector<char*> raw;
  for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
  raw.push_back(nullptr);
  std::fflush(stdout);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw util::EnvironmentError("attnprof package: fork failed");
  if (pid == 0) {
    // The packaging python must not outlive us: a command killed by CI's timeout (or ^C twice)
    // would leave it compiling for minutes.
    util::die_with_parent(parent, util::exit_environment);
    execvp(raw[0], raw.data());
    std::fprintf(stderr, "error: cannot run %s\n", raw[0]);
    _exit(util::exit_environment);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// The script's last step as it noted it in its status file ("importing\tFILE", ...,
// "done\t"): {what, where}, both empty when it noted none.
std::pair<std::string, std::string> last_step(const fs::path& status_file) {
  std::ifstream in(status_file);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  const auto tab = last.find('\t');
  if (tab == std::string::npos) return {last, ""};
  return {last.substr(0, tab), last.substr(tab + 1)};
}

// The command's exit code from the script's wait status: its own exit code once it noted
// "done" (it catches what Python can: exceptions, sys.exit). Otherwise the process ended in the
// middle of a step and said nothing itself: the module ended it (os._exit, exit() in C code),
// exit 2 naming the module's file; or it was killed (a crash), exit 3, naming it too.
int outcome(int status, const fs::path& status_file) {
  const auto [what, where] = last_step(status_file);
  if (what == "done" && WIFEXITED(status)) return WEXITSTATUS(status);
  std::string how;
  if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    how = fmt::format("was killed by signal {} (SIG{})", WTERMSIG(status), abbrev ? abbrev : "?");
  } else {
    how = fmt::format("exited with status {}", WEXITSTATUS(status));
  }
  if (what.empty())
    throw util::EnvironmentError(
        fmt::format("the packaging python {} before it began; no package was made", how));
  const std::string said =
      fmt::format("the packaging python {} while {}; no package was made", how, what);
  if (WIFSIGNALED(status)) throw util::EnvironmentError(fmt::format("{}: {}", where, said));
  throw util::InputError(util::Diagnostic{
      where, 0, 0,
      said + " (a module to package must not end its process: os._exit, or exit in C code)"});
}

}  // namespace

int run_packaging(const std::vector<std::string>& argv, const fs::path& status_file) {
  return outcome(run_child(argv), status_file);
}

}  // namespace attnprof::cli
