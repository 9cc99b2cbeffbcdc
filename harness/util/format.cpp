// The duration format of every table attnprof prints, and the whitespace rule that puts text
// on one line (format.h).
#include "harness/util/format.h"

#include <fmt/format.h>

#include <cmath>

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

}  // namespace attnprof::util
