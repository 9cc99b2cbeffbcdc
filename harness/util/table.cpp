// Plain-text and markdown tables that fit a terminal, and the one-line and wrapped cells they
// are made of (table.h).
#include "harness/util/table.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "harness/util/format.h"

namespace attnprof::util {

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
      R"(^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?( ?(%|ns|us|ms|s|x|B|KiB|MiB|GiB))?$)");
  return std::regex_match(s, number);
}

std::size_t display_width(const std::string& s) {
  std::size_t w = 0;
  for (unsigned char c : s) w += !continuation(c);
  return w;
}

std::string one_line(const std::string& text, std::size_t cap) {
  std::string out = collapse_whitespace(text);
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
    // A '-' inside a word ("b1-s128"), not an option's ("--wide").
    auto after = [&](std::size_t i) {
      const char c = rest[i - 1];
      if (c == '-') return i >= 2 && std::isalnum(static_cast<unsigned char>(rest[i - 2]));
      return std::string_view(" /,;").find(c) != std::string_view::npos;
    };
    for (std::size_t i = limit; i > limit / 2; --i)
      if (after(i)) {
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

// Four steps (format.h): one-line cells, the detail column under its row, columns left out in
// their drop order, an overlong key on a line of its own; then the lines themselves.
std::string Table::render(std::size_t width) const {
  const std::size_t cols = m_header.size();
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : m_rows) {
    std::vector<std::string> cells(cols);
    for (std::size_t i = 0; i < cols && i < r.size(); ++i)
      cells[i] = one_line(r[i], width == 0 || i == m_key ? 0
                                : i == m_detail          ? kDetailCap
                                                         : kCellCap);
    rows.push_back(std::move(cells));
  }
  std::vector<std::size_t> w(cols, 0);
  for (std::size_t i = 0; i < cols; ++i) {
    w[i] = display_width(m_header[i]);
    for (const auto& r : rows) w[i] = std::max(w[i], display_width(r[i]));
  }
  std::vector<std::size_t> drop = m_drop;
  if (m_detail < cols) drop.insert(drop.begin(), m_detail);
  const std::vector<bool> in_grid = columns_that_fit(w, drop, 2, width);
  std::size_t total = 0, last = 0;  // the last column in the grid goes unpadded
  std::vector<std::string> left_out;
  for (std::size_t i = 0; i < cols; ++i) {
    if (in_grid[i]) total += w[i] + (total ? 2 : 0), last = i;
    if (!in_grid[i] && i != m_detail) left_out.push_back(m_header[i]);
  }
  if (width > 0 && total > width && m_key < cols && in_grid[m_key]) {
    const std::size_t others = total - w[m_key];
    w[m_key] = std::max(display_width(m_header[m_key]), width > others ? width - others : 0);
    total = others + w[m_key];
  }

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
  out += std::string(total, '-') + "\n";
  for (const auto& r : rows) {
    if (m_key < cols && in_grid[m_key] && display_width(r[m_key]) > w[m_key]) {
      out += r[m_key] + "\n";  // whole, so that it can be pasted; the row's cells under it
      std::vector<std::string> cells = r;
      cells[m_key].clear();
      out += line(cells, false);
    } else {
      out += line(r, false);
    }
    if (m_detail < cols && !in_grid[m_detail] && !r[m_detail].empty()) {
      // Under its row, indented past a marker, wrapped to the table's width.
      for (const auto& part : wrap(r[m_detail], (width > 4 ? width : 120) - 4))
        out += "    " + part + "\n";
    }
  }
  return out + left_out_note(left_out, width);
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

}  // namespace attnprof::util
