// Custom additive mask files (mask: custom): read and checked when the scenario is validated, so
// a wrong shape or a NaN is an error at the file's line and column before anything runs.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "harness/scenario/scenario.h"
#include "harness/util/error.h"

namespace attnprof::scenario {

MaskFile read_mask_file(const std::string& path) {
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  if (!std::filesystem::is_regular_file(path, ec) || !in)
    throw util::InputError(util::Diagnostic{path, 0, 0, "cannot open custom mask file"});
  MaskFile m;
  std::vector<util::Diagnostic> errors;
  std::string text;
  int line = 0, first_row_line = 0;
  while (std::getline(in, text) && errors.size() < 10) {
    ++line;
    int cols = 0;
    for (std::size_t i = 0; i < text.size();) {
      if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r') {
        ++i;
        continue;
      }
      const std::size_t end = std::min(text.find_first_of(" \t\r", i), text.size());
      const std::string_view tok(text.data() + i, end - i);
      float v = 0;
      // -inf masks a key out; any other value must be finite: NaN would poison every score of
      // its row, +inf would make the softmax NaN.
      if (tok == "-inf" || tok == "-infinity") {
        v = -std::numeric_limits<float>::infinity();
      } else {
        // from_chars takes no leading '+'; a mask written by another tool may have one.
        const std::string_view num = tok.starts_with('+') ? tok.substr(1) : tok;
        auto [p, err] = std::from_chars(num.data(), num.data() + num.size(), v);
        if (num.empty() || (num[0] == '-' && tok[0] == '+') || err != std::errc{} ||
            p != num.data() + num.size() || !std::isfinite(v)) {
          errors.push_back({path, line, static_cast<int>(i + 1),
                            fmt::format("\"{}\" is not a finite number or -inf", tok)});
          v = 0;
        }
      }
      m.values.push_back(v);
      ++cols;
      i = end;
    }
    if (cols == 0) continue;  // blank lines separate nothing
    if (m.rows == 0) {
      m.cols = cols;
      first_row_line = line;
    } else if (cols != m.cols) {
      errors.push_back({path, line, 0,
                        fmt::format("{} values in this row, {} in the first (line {}); every row "
                                    "needs one value per key",
                                    cols, m.cols, first_row_line)});
    }
    ++m.rows;
  }
  if (errors.empty() && m.rows == 0)
    errors.push_back({path, 0, 0, "the mask file is empty: write q_len rows of kv_len values"});
  if (!errors.empty()) throw util::InputError(errors);
  return m;
}

}  // namespace attnprof::scenario
