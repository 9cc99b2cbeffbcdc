// Plain-text and markdown tables that fit a terminal, and the one-line, wrapped and escaped
// cells they are made of (format.h).
#include "harness/report/format.h"

#include <algorithm>
#include <regex>

#include "harness/util/format.h"

namespace attnprof::report {

namespace {

bool continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

// The byte offset after the first `columns` code points of s.
std::size_t byte_offset(const std::string& s, std::size_t columns) {
  std::size_t i = 0, seen = 0;
  while (i < s.size()) {
    if (!continuation(s[i]) && seen++ == columns) break;
    ++i;
  }
  return i;
}

std::string pad_to(const std::string& s, std::size_t w, bool right) {
  const std::size_t n = display_width(s);
  const std::string pad(w > n ? w - n : 0, ' ');
  return right ? pad + s : s + pad;
}

}  // namespace

bool numeric(const std::string& s) {
  static const std::regex number(
      R"(^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?( ?(%|ns|us|ms|s|x))?$)");
  return std::regex_match(s, number);
}

std::size_t display_width(const std::string& s) {
  std::size_t w = 0;
  for (unsigned char c : s) w += !continuation(c);
  return w;
}

std::string one_line(const std::string& text, std::size_t cap) {
  std::string out = util::collapse_whitespace(text);
  if (cap > 0 && display_width(out) > cap) {
    out.resize(byte_offset(out, cap - 1));
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "…";
  }
  return out;
}

std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string rest = text;
  width = std::max<std::size_t>(width, 8);
  while (display_width(rest) > width) {
    const std::size_t limit = byte_offset(rest, width);
    // Break after the last separator in the line's second half; mid-word if there is none.
    std::size_t cut = limit;
    for (std::size_t i = limit; i > limit / 2; --i)
      if (std::string_view(" /,;-").find(rest[i - 1]) != std::string_view::npos) {
        cut = i;
        break;
      }
    std::string line = rest.substr(0, cut);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(line);
    rest = rest.substr(cut);
    while (!rest.empty() && rest.front() == ' ') rest.erase(0, 1);
  }
  if (!rest.empty() || lines.empty()) lines.push_back(rest);
  return lines;
}

std::string Table::render(std::size_t width) const {
  const std::size_t cols = m_header.size();
  const std::size_t cap = width == 0 ? 0 : kCellCap;
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : m_rows) {
    std::vector<std::string> cells(cols);
    for (std::size_t i = 0; i < cols && i < r.size(); ++i) cells[i] = one_line(r[i], cap);
    rows.push_back(std::move(cells));
  }
  std::vector<bool> in_grid(cols, true);
  auto widths = [&] {
    std::vector<std::size_t> w(cols, 0);
    for (std::size_t i = 0; i < cols; ++i) {
      if (!in_grid[i]) continue;
      w[i] = display_width(m_header[i]);
      for (const auto& r : rows) w[i] = std::max(w[i], display_width(r[i]));
    }
    return w;
  };
  auto total = [&](const std::vector<std::size_t>& w) {
    std::size_t sum = 0, shown = 0;
    for (std::size_t i = 0; i < cols; ++i)
      if (in_grid[i]) sum += w[i], ++shown;
    return sum + 2 * (shown ? shown - 1 : 0);
  };
  std::vector<std::size_t> w = widths();
  if (width > 0 && total(w) > width && m_detail < cols) {
    in_grid[m_detail] = false;
    w = widths();
  }
  if (width > 0 && total(w) > width && m_wrap < cols && in_grid[m_wrap]) {
    const std::size_t others = total(w) - w[m_wrap];
    const std::size_t floor = std::max<std::size_t>(display_width(m_header[m_wrap]), 16);
    w[m_wrap] = std::max(floor, width > others ? width - others : 0);
  }
  std::size_t last = 0;  // the last column in the grid goes unpadded
  for (std::size_t i = 0; i < cols; ++i)
    if (in_grid[i]) last = i;

  auto line = [&](const std::vector<std::string>& r, bool header) {
    std::string out;
    bool first = true;
    for (std::size_t i = 0; i < cols; ++i) {
      if (!in_grid[i]) continue;
      if (!first) out += "  ";
      first = false;
      const std::string& cell = r[i];
      const bool right = !header && numeric(cell);
      out += right ? pad_to(cell, w[i], true) : (i == last ? cell : pad_to(cell, w[i], false));
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(m_header, true);
  out += std::string(total(w), '-') + "\n";
  for (const auto& r : rows) {
    if (m_wrap < cols && in_grid[m_wrap] && display_width(r[m_wrap]) > w[m_wrap]) {
      const std::vector<std::string> parts = wrap(r[m_wrap], w[m_wrap]);
      std::vector<std::string> cells = r;
      for (std::size_t k = 0; k < parts.size(); ++k) {
        if (k > 0) std::fill(cells.begin(), cells.end(), std::string());
        cells[m_wrap] = parts[k];
        out += line(cells, false);
      }
    } else {
      out += line(r, false);
    }
    if (m_detail < cols && !in_grid[m_detail] && !r[m_detail].empty()) {
      // Under its row, indented past a marker, wrapped to the table's width.
      for (const auto& part : wrap(r[m_detail], (width > 4 ? width : 120) - 4))
        out += "    " + part + "\n";
    }
  }
  return out;
}

std::string Table::render_markdown(std::size_t cap) const {
  auto esc = [cap](const std::string& s) {
    std::string o;
    // Pipes would end the cell; '<' would start HTML (a reason is free text, e.g. a commit
    // trailer's, and GitHub renders tags in tables).
    for (char c : one_line(s, cap))
      o += c == '|' ? std::string("\\|") : c == '<' ? std::string("&lt;") : std::string(1, c);
    return o;
  };
  std::string out = "|";
  for (const auto& h : m_header) out += " " + esc(h) + " |";
  out += "\n|";
  for (std::size_t i = 0; i < m_header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : m_rows) {
    out += "|";
    for (std::size_t i = 0; i < m_header.size(); ++i)
      out += " " + esc(i < r.size() ? r[i] : "") + " |";
    out += "\n";
  }
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        // XML 1.0 has no way to write most control characters: drop them.
        if (c >= 0x20 || c == '\n' || c == '\t') o += static_cast<char>(c);
    }
  }
  return o;
}

}  // namespace attnprof::report
