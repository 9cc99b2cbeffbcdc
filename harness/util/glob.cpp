// The one rule for what a case-key glob may be (glob.h).
#include "harness/util/glob.h"

#include <fmt/format.h>

namespace attnprof::util {

std::optional<GlobProblem> glob_problem(std::string_view glob) {
  for (std::size_t i = 0; i < glob.size(); ++i) {
    if (glob[i] != '[') continue;
    std::size_t j = i + 1;
    if (j < glob.size() && (glob[j] == '!' || glob[j] == '^')) ++j;
    if (j < glob.size() && glob[j] == ']') ++j;  // a member, not the end
    const std::size_t close = glob.find(']', j);
    if (close == std::string_view::npos)
      return GlobProblem{i + 1, "opens a set of characters that no \"]\" closes"};
    i = close;
  }
  return std::nullopt;
}

std::string describe(std::string_view glob, const GlobProblem& p) {
  return fmt::format(
      "\"{}\" is not a glob: the \"[\" at character {} {} (to match \"[\" itself, write \"[[]\")",
      glob, p.at, p.what);
}

}  // namespace attnprof::util
