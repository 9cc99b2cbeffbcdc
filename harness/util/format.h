// Text for people: the one duration and size formatters for every table and report attnprof
// prints, and the one rule that puts text spanning lines on one line.
#pragma once

#include <string>
#include <string_view>

namespace attnprof::util {

// "812 ns", "12.3 us", "4.56 ms", "123 ms", "1.23 s": three significant figures, fixed units,
// negative values (differences) keep their sign.
std::string format_duration(double ns);

// "512 B", "1.50 KiB", "384.00 KiB", "-3.00 MiB", "1.25 GiB": powers of 1024, two decimals from
// KiB up, negative values (memory freed) keep their sign.
std::string format_bytes(double bytes);

// `text` with every run of whitespace (newlines, tabs, spaces) as one space, none at either
// end: a SQL statement in an error message, a reason in a table cell.
std::string collapse_whitespace(std::string_view text);

}  // namespace attnprof::util
