// The duration and size formats of every table attnprof prints, and the whitespace rule that
// puts text on one line (format.h).
#include "harness/util/format.h"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "harness/util/table.h"

namespace attnprof::util {

std::string format_duration(double ns) {
  if (ns < 0) return "-" + format_duration(-ns);
  auto three = [](double v, const char* unit) {
    if (v >= 99.95) return fmt::format("{:.0f} {}", v, unit);
    if (v >= 9.995) return fmt::format("{:.1f} {}", v, unit);
    return fmt::format("{:.2f} {}", v, unit);
  };
  // Thresholds just below each unit, so 999.96 us prints as "1.00 ms", not "1000 us".
  if (ns < 999.5) return fmt::format("{:.0f} ns", ns);
  if (ns < 999.95e3) return three(ns / 1e3, "us");
  if (ns < 999.95e6) return three(ns / 1e6, "ms");
  return three(ns / 1e9, "s");
}

std::string format_bytes(double bytes) {
  if (bytes < 0) return "-" + format_bytes(-bytes);
  constexpr double kib = 1024, mib = 1024 * kib, gib = 1024 * mib;
  if (bytes >= gib) return fmt::format("{:.2f} GiB", bytes / gib);
  if (bytes >= mib) return fmt::format("{:.2f} MiB", bytes / mib);
  if (bytes >= kib) return fmt::format("{:.2f} KiB", bytes / kib);
  return fmt::format("{:.0f} B", bytes);
}

std::string collapse_whitespace(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::vector<bool> columns_that_fit(const std::vector<std::size_t>& widths,
                                   const std::vector<std::size_t>& drop_order, std::size_t gap,
                                   std::size_t width) {
  std::vector<bool> kept(widths.size(), true);
  auto total = [&] {
    std::size_t sum = 0, shown = 0;
    for (std::size_t i = 0; i < widths.size(); ++i)
      if (kept[i]) sum += widths[i], ++shown;
    return sum + gap * (shown ? shown - 1 : 0);
  };
  std::vector<std::size_t> dropped;
  for (std::size_t i = 0; width > 0 && i < drop_order.size() && total() > width; ++i)
    if (drop_order[i] < kept.size() && kept[drop_order[i]])
      kept[drop_order[i]] = false, dropped.push_back(drop_order[i]);
  // The last column left out may have made room for one left out before it (a wide column
  // dropped after a narrow one): those come back, last left out first, where they fit.
  for (std::size_t i = dropped.size(); i-- > 1;) {
    kept[dropped[i - 1]] = true;
    if (total() > width) kept[dropped[i - 1]] = false;
  }
  return kept;
}

std::string left_out_note(const std::vector<std::string>& names, std::size_t width) {
  if (names.empty()) return "";
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  const std::string note =
      fmt::format("(left out to fit {} columns: {}; --wide prints them)", width, list);
  // Wrapped (after its commas) where it is wider than the table it speaks of.
  std::string out;
  for (const auto& line : wrap(note, width)) out += line + "\n";
  return out;
}

}  // namespace attnprof::util
