// Text for people: one duration formatter for every table attnprof prints, and the one rule
// that puts text spanning lines on one line.
#pragma once

#include <string>
#include <string_view>

namespace attnprof::util {

// "812 ns", "12.3 us", "4.56 ms", "123 ms", "1.23 s": three significant figures, fixed units,
// negative values (differences) keep their sign.
std::string format_duration(double ns);

// `text` with every run of whitespace (newlines, tabs, spaces) as one space, none at either
// end: a SQL statement in an error message, a reason in a table cell.
std::string collapse_whitespace(std::string_view text);

}  // namespace attnprof::util
