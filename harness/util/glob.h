// Globs over case keys, the way every command matches them: fnmatch without flags, so `*`
// crosses `/` ("llama-2-7b/*" matches every case of the model), and the one rule for what a glob
// may be (glob_problem), which every option and Perf-Accept trailer that takes one applies.
#pragma once

#include <fnmatch.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace attnprof::util {

inline bool glob_match(const std::string& glob, const std::string& text) {
  return fnmatch(glob.c_str(), text.c_str(), 0) == 0;
}

// What is wrong with `glob`, and where (`at`: its 1-based character), or nullopt. A "[" opens a
// set of characters that a "]" must close ("]" right after "[", "[!" or "[^" is a member): the
// history's queries match with SQLite's GLOB, which reads an unclosed "[" as a set that matches
// nothing, while annotations, suites and scenarios match with fnmatch, which reads it as the
// character itself, so such a glob would mean two things in one command.
struct GlobProblem {
  std::size_t at = 0;
  std::string what;
};
std::optional<GlobProblem> glob_problem(std::string_view glob);
// The problem as one message: "\"GLOB\" is not a glob: the \"[\" at character 1 ...".
std::string describe(std::string_view glob, const GlobProblem& p);

}  // namespace attnprof::util
