// Text building blocks shared by the reporters: aligned plain-text and markdown tables.
#pragma once

#include <string>
#include <vector>

namespace attnprof::report {

// A plain-text table with a header row and columns aligned; numeric-looking cells right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : m_header(std::move(header)) {}
  void add(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }
  bool empty() const { return m_rows.empty(); }
  std::string render() const;
  std::string render_markdown() const;

 private:
  std::vector<std::string> m_header;
  std::vector<std::vector<std::string>> m_rows;
};

}  // namespace attnprof::report
