// The scaffolding every HTML report page shares: escaping, dates and durations as the pages
// print them, the page itself (inline CSS, no script, no network) and a plain table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnprof::report::html {

std::string esc(const std::string& s);
std::string date(std::int64_t ns);  // "2026-11-30 10:37" (UTC); "" for 0
std::string dur(double ns);         // util::format_duration; "" for 0 or less
// A whole page: the title as <title> and <h1>, then `body`.
std::string page(const std::string& title, const std::string& body);
// Numeric cells right-aligned; `row_classes[i]` (e.g. a verdict) colours row i.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows,
                  const std::vector<std::string>& row_classes = {});

}  // namespace attnprof::report::html
