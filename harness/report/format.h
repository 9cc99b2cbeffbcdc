// Text building blocks of the reporters: the tables (util/table.h, named here as they always
// were), how wide the console is, and text escaped for XML and HTML.
#pragma once

#include <cstddef>
#include <string>

#include "harness/util/table.h"

namespace attnprof::report {

using util::display_width;
using util::kCellCap;
using util::kConsoleWidth;
using util::numeric;
using util::one_line;
using util::Table;
using util::wrap;

// Text for XML and HTML: & < > " ' escaped, control characters XML cannot hold dropped.
std::string xml_escape(const std::string& s);

// The width console tables fit: $COLUMNS when it is a number of at least 40 (what a test or a
// user sets), else the terminal's when `fd` is one, else kConsoleWidth (CI logs, pipes).
std::size_t console_width(int fd = 1);

}  // namespace attnprof::report
