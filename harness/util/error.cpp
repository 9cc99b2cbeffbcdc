#include "harness/util/error.h"

#include <fmt/format.h>

namespace attnprof::util {

std::string Diagnostic::to_string() const {
  if (line <= 0) return fmt::format("{}: {}", file, message);
  if (col <= 0) return fmt::format("{}:{}: {}", file, line, message);
  return fmt::format("{}:{}:{}: {}", file, line, col, message);
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
