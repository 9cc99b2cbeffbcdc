// The two workers of an A/B (workers.h): their spawns, the A/A test, the kernels of both.
#include "harness/ab/workers.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "harness/worker/wait_policy.h"

namespace attnprof::ab {
namespace {

std::string real_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

// The worker's arguments with every plugin named by its real path: the worker loads a bare name
// from the working folder, so "a.so", "./a.so" and a symlink to it are one plugin.
std::vector<std::string> with_real_plugin_paths(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].starts_with("--plugin="))
      out.push_back("--plugin=" + real_path(args[i].substr(9)));
    else if (args[i] == "--plugin" && i + 1 < args.size())
      out.push_back("--plugin=" + real_path(args[++i]));
    else
      out.push_back(args[i]);
  }
  return out;
}

}  // namespace

Sides sides(worker::Spawn base, worker::Spawn head, const std::vector<std::string>& user_env) {
  Sides s{std::move(base), std::move(head)};
  // The workers' OpenMP wait policy: one rule with `attnprof run` (worker/wait_policy.h).
  std::vector<std::string> env = user_env;
  s.wait_policy_chosen = worker::apply_wait_policy(env);
  for (const auto& e : env) {
    s.base.args.push_back("--env=" + e);
    s.head.args.push_back("--env=" + e);
  }
  return s;
}

bool same_build(const worker::Spawn& base, const worker::Spawn& head) {
  return real_path(base.executable) == real_path(head.executable) &&
         with_real_plugin_paths(base.args) == with_real_plugin_paths(head.args);
}

worker::Described both_sides(const worker::Described& base, const worker::Described& head) {
  worker::Described both = head;
  for (const auto& k : base.kernels)
    if (std::find(both.kernels.begin(), both.kernels.end(), k) == both.kernels.end())
      both.kernels.push_back(k);
  both.plugins.insert(both.plugins.end(), base.plugins.begin(), base.plugins.end());
  return both;
}

}  // namespace attnprof::ab
