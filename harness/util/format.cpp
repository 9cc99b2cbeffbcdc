// The duration and size formats of every table attnprof prints, and the whitespace rule that
// puts text on one line (format.h).
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

}  // namespace attnprof::util
