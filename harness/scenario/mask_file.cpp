// Custom additive mask files (mask: custom): read and checked when the scenario is validated, so
// a wrong shape or a NaN is an error at the file's line and column before anything runs. What a
// read holds is bounded by the case's shape: a 256 MiB file for a 128 x 128 mask is refused by
// its size, before a byte of it is read, and the values of a file within that size take at most
// twice its bytes.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "harness/scenario/scenario.h"
#include "harness/util/error.h"
#include "harness/util/format.h"

namespace attnprof::scenario {
namespace {

// One value: -inf masks a key out; any other must be finite (NaN would poison every score of
// its row, +inf would make the softmax NaN). nullopt when it is neither.
std::optional<float> parse_value(std::string_view tok) {
  if (tok == "-inf" || tok == "-infinity") return -std::numeric_limits<float>::infinity();
  // from_chars takes no leading '+'; a mask written by another tool may have one.
  const std::string_view num = tok.starts_with('+') ? tok.substr(1) : tok;
  float v = 0;
  auto [p, err] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (num.empty() || (num[0] == '-' && tok[0] == '+') || err != std::errc{} ||
      p != num.data() + num.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// A token too long to be a value, named by its start and length: never the token itself, which
// may be the whole file.
std::string shown(std::string_view tok) {
  if (tok.size() <= kMaskValueChars) return fmt::format("\"{}\"", tok);
  return fmt::format("\"{}...\" ({} characters)", tok.substr(0, 16), tok.size());
}


}  // namespace

MaskFile read_mask_file(const std::string& path, int rows, int cols) {
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  if (!std::filesystem::is_regular_file(path, ec) || !in)
    throw util::InputError(util::Diagnostic{path, 0, 0, "cannot open custom mask file"});
  MaskFile m;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  // Values written in full, a line end per row, and a page of blank lines and spaces.
  const std::uintmax_t most =
      static_cast<std::uintmax_t>(rows) * static_cast<std::uintmax_t>(cols) * kMaskValueChars +
      2 * static_cast<std::uintmax_t>(rows) + 4096;
  if (!ec && size > most) {
    m.beyond = fmt::format("is {} ({} bytes), more than {} x {} values take ({} at most)",
                           util::format_bytes(static_cast<double>(size)), size, rows, cols,
                           util::format_bytes(static_cast<double>(most)));
    return m;
  }
  std::vector<util::Diagnostic> errors;
  std::string text;
  int line = 0, first_row_line = 0;
  // Bounded by the size: at most 2 bytes a value, so the values take at most twice the file.
  while (std::getline(in, text) && errors.size() < 10) {
    ++line;
    int n = 0;
    for (std::size_t i = 0; i < text.size();) {
      if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r') {
        ++i;
        continue;
      }
      const std::size_t end = std::min(text.find_first_of(" \t\r", i), text.size());
      const std::string_view tok(text.data() + i, end - i);
      const std::optional<float> v = parse_value(tok);
      if (!v)
        errors.push_back({path, line, static_cast<int>(i + 1),
                          fmt::format("{} is not a finite number or -inf", shown(tok))});
      m.values.push_back(v.value_or(0));
      ++n;
      i = end;
    }
    if (n == 0) continue;  // blank lines separate nothing
    if (m.rows == 0) {
      m.cols = n;
      first_row_line = line;
    } else if (n != m.cols) {
      errors.push_back({path, line, 0,
                        fmt::format("{} values in this row, {} in the first (line {}); every row "
                                    "needs one value per key",
                                    n, m.cols, first_row_line)});
    }
    ++m.rows;
  }
  if (errors.empty() && m.rows == 0)
    errors.push_back({path, 0, 0, "the mask file is empty: write q_len rows of kv_len values"});
  if (!errors.empty()) throw util::InputError(errors);
  return m;
}

}  // namespace attnprof::scenario
