// Text for people: the one duration and size formatters for every table and report attnprof
// prints, the one rule that puts text spanning lines on one line, and the one rule that says
// which columns of a table fit a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

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

// Which columns of a table stay within `width` columns (0: all of them): columns are left out
// in `drop_order` (first listed, first left out) until the widths, with `gap` columns between
// each two, fit, and those left out before the last come back where they then fit; columns not
// listed always stay. Both the report tables and the cost matrix
// degrade by this rule, never by splitting a cell.
std::vector<bool> columns_that_fit(const std::vector<std::size_t>& widths,
                                   const std::vector<std::size_t>& drop_order, std::size_t gap,
                                   std::size_t width);

// "(left out to fit 80 columns: GB/s, TFLOP/s; --wide prints them)", or "" when none is.
std::string left_out_note(const std::vector<std::string>& names, std::size_t width);

}  // namespace attnprof::util
