// Plain-text and markdown tables that fit a terminal, and the one-line cells they are made of:
// every table attnprof prints (reports, history, lists) is one of these.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attnprof::util {

// Console tables fit this many columns unless --wide asks for everything.
inline constexpr std::size_t kConsoleWidth = 120;
// The longest a table cell gets (in columns) before it is cut with "…", outside --wide.
inline constexpr std::size_t kCellCap = 160;
// The longest a detail cell (set_detail) gets: it is wrapped under its row, not a column, so it
// holds a whole reason (a gate's runs to about 450 columns, and its last clause, "but unstable:
// descheduled in ...", is what a reader needs), while a 45-line PyTorch error is still cut.
inline constexpr std::size_t kDetailCap = 800;

// A number, optionally with a unit ("12.3 us", "+4.50%", "1.02x", "384.00 KiB"): tables
// right-align these.
bool numeric(const std::string& cell);

// Display width in columns: counts UTF-8 code points, not bytes ("±", "…", "▁").
std::size_t display_width(const std::string& s);

// A table cell from any text: line breaks and runs of whitespace become one space (a 45-line
// PyTorch error is one line), and text longer than `cap` columns ends in "…". cap 0: no cap.
std::string one_line(const std::string& text, std::size_t cap = kCellCap);

// `text` cut into lines of at most `width` columns, breaking after ' ', '/', ',', ';' or '-'
// where one is near the end, else mid-word.
std::vector<std::string> wrap(const std::string& text, std::size_t width);

// A plain-text table with a header row and columns aligned; numeric-looking cells right-aligned.
// Layout within `width` (render's argument; 0 means unlimited, for --wide):
//   1. every cell is one line (one_line; capped at kCellCap, the detail column at kDetailCap,
//      unless width is 0), the key column (set_key) never capped: a case key is pasted into
//      --case whole;
//   2. if the rows are still too wide, the detail column (set_detail) leaves the grid and each
//      row's text goes on an indented line of its own under the row, wrapped;
//   3. if still too wide, columns are left out in set_drop_order's order
//      (columns_that_fit, format.h) and a line under the table names them;
//   4. a key still too long for what is left goes whole on a line of its own, its row's cells
//      on the next line: no cell is ever split.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : m_header(std::move(header)) {}
  void add(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }
  void set_detail(std::size_t column) { m_detail = column; }
  void set_key(std::size_t column) { m_key = column; }
  // Columns left out first to last when the table is too wide; the others always stay.
  void set_drop_order(std::vector<std::size_t> columns) { m_drop = std::move(columns); }
  bool empty() const { return m_rows.empty(); }
  std::string render(std::size_t width = kConsoleWidth) const;
  // One line per row, cells one_line'd and capped at `cap`, pipes escaped.
  std::string render_markdown(std::size_t cap = 400) const;

 private:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<std::string> m_header;
  std::vector<std::vector<std::string>> m_rows;
  std::size_t m_detail = none, m_key = none;
  std::vector<std::size_t> m_drop;
};

}  // namespace attnprof::util
