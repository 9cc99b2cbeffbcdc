// Where a run came from: commit, branch, PR and CI run URL, from flags, else the CI's
// environment (GitHub Actions), else the git checkout in the working directory.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "harness/core/types.h"

namespace attnprof::cli {

struct RunMetadata {
  std::string commit, branch, pr, ci_url;
  void add_options(CLI::App& sub);
  void fill(core::Run& run) const;  // flags first, then $GITHUB_*, then `git rev-parse`
};

// `git <args>` in the working directory: its whole output, or nullopt when git fails.
std::optional<std::string> git(const std::string& args);

}  // namespace attnprof::cli
