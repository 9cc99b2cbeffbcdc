// The hint after a misplaced value of a repeatable option: in `run --case 'a*' 'b*'`, "b*" is
// no second --case value (each occurrence takes one, options.h); when the parse or the command
// fails on that token, the error says how to give both.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace attnprof::cli {

// A token right after a repeatable option's value: "b*" in `run --case 'a*' 'b*'`, which the
// option took as a second value before each took one.
struct AfterValue {
  std::string token, option, value;
};

// The first such token on the command line, if any.
std::optional<AfterValue> after_repeatable(CLI::App& app, int argc, char** argv);

// "note: "b*" is not a second --case value: ...; to give two, repeat it: --case 'a*' --case 'b*'"
void print_repeat_hint(const AfterValue& a);

// A scenario file that is not there after --case is a scenario file, not a misplaced glob.
bool names_scenario(const std::string& token);

}  // namespace attnprof::cli
