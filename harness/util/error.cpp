// Diagnostics as "path:line:col: message" text, control characters escaped, and the errors
// that carry them (error.h).
#include "harness/util/error.h"

#include <fmt/format.h>

namespace attnprof::util {

// A value quoted in a message may hold a newline (a YAML block scalar, a JSON string): written
// raw it would split the diagnostic into lines that no longer start with file:line:col.
static std::string escape_controls(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

std::string Diagnostic::to_string() const {
  const std::string f = escape_controls(file), m = escape_controls(message);
  if (line <= 0) return fmt::format("{}: {}", f, m);
  if (col <= 0) return fmt::format("{}:{}: {}", f, line, m);
  return fmt::format("{}:{}:{}: {}", f, line, col, m);
}

static std::string join(const std::vector<Diagnostic>& diags) {
  std::string out;
  for (const auto& d : diags) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out;
}

InputError::InputError(std::vector<Diagnostic> diags)
    : std::runtime_error(join(diags)), m_diags(std::move(diags)) {}

}  // namespace attnprof::util
