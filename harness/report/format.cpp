#include "harness/report/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>

namespace attnprof::report {

namespace {

// Right-aligned cells: a number, optionally followed by a unit ("12.3 us", "+4.50%", "1.02x").
bool numeric(const std::string& s) {
  static const std::regex number(
      R"(^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?( ?(%|ns|us|ms|s|x))?$)");
  return std::regex_match(s, number);
}

// Display width in columns: counts UTF-8 code points, not bytes (for "±", "▁").
size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

}  // namespace

std::string Table::render() const {
  std::vector<size_t> w(m_header.size(), 0);
  for (size_t i = 0; i < m_header.size(); ++i) w[i] = width(m_header[i]);
  for (const auto& r : m_rows)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  auto line = [&](const std::vector<std::string>& r, bool header) {
    std::string out;
    for (size_t i = 0; i < w.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      const std::string pad(w[i] - width(cell), ' ');
      const bool right = !header && numeric(cell);
      if (i) out += "  ";
      out += right ? pad + cell : (i + 1 == w.size() ? cell : cell + pad);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(m_header, true);
  size_t total = 0;
  for (size_t x : w) total += x;
  out += std::string(total + 2 * (w.size() - 1), '-') + "\n";
  for (const auto& r : m_rows) out += line(r, false);
  return out;
}

std::string Table::render_markdown() const {
  auto esc = [](std::string s) {
    std::string o;
    for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
    return o;
  };
  std::string out = "|";
  for (const auto& h : m_header) out += " " + esc(h) + " |";
  out += "\n|";
  for (size_t i = 0; i < m_header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : m_rows) {
    out += "|";
    for (size_t i = 0; i < m_header.size(); ++i) out += " " + esc(i < r.size() ? r[i] : "") + " |";
    out += "\n";
  }
  return out;
}

}  // namespace attnprof::report
