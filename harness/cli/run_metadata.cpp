// Where a run came from (run_metadata.h): the --commit, --branch, --pr and --ci-url options,
// else GitHub Actions' variables, else `git` in the working directory.
#include "harness/cli/run_metadata.h"

#include <cstdio>
#include <cstdlib>

namespace attnprof::cli {
namespace {

std::string env_or(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// git's output without its trailing newline; empty when git fails.
std::string git_line(const std::string& args) {
  std::string out = git(args).value_or("");
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

std::optional<std::string> git(const std::string& args) {
  FILE* p = popen(("git " + args + " 2>/dev/null").c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  if (pclose(p) != 0) return std::nullopt;
  return out;
}

void RunMetadata::add_options(CLI::App& sub) {
  sub.add_option("--commit", commit,
                 "Git commit of the code under test (default: $GITHUB_SHA, else git)");
  sub.add_option("--branch", branch,
                 "Branch (default: $GITHUB_HEAD_REF/$GITHUB_REF_NAME, else git)");
  sub.add_option("--pr", pr, "Pull request number, if any");
  sub.add_option("--ci-url", ci_url, "URL of the CI run (default: built from $GITHUB_* variables)");
}

void RunMetadata::fill(core::Run& run) const {
  run.git_commit = !commit.empty() ? commit : env_or("GITHUB_SHA", git_line("rev-parse HEAD"));
  run.git_branch = !branch.empty()
                       ? branch
                       : env_or("GITHUB_HEAD_REF",
                                env_or("GITHUB_REF_NAME", git_line("rev-parse --abbrev-ref HEAD")));
  run.pr = pr;
  if (run.pr.empty()) {
    // GitHub sets GITHUB_REF=refs/pull/<n>/merge for pull_request events.
    const std::string ref = env_or("GITHUB_REF");
    const std::string prefix = "refs/pull/";
    if (ref.rfind(prefix, 0) == 0)
      run.pr = ref.substr(prefix.size(), ref.find('/', prefix.size()) - prefix.size());
  }
  run.ci_url = ci_url;
  if (run.ci_url.empty() && !env_or("GITHUB_RUN_ID").empty())
    run.ci_url = env_or("GITHUB_SERVER_URL", "https://github.com") + "/" +
                 env_or("GITHUB_REPOSITORY") + "/actions/runs/" + env_or("GITHUB_RUN_ID");
}

}  // namespace attnprof::cli
