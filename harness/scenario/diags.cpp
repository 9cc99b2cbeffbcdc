// Collecting a scenario's problems to report them all at once, and the "did you mean" that
// proposes the nearest valid word (diags.h).
#include "harness/scenario/diags.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace attnprof::scenario {

void Diags::error(const core::SourceLoc& at, std::string message) {
  ++m_calls;
  util::Diagnostic d{at.file, at.line, at.col, std::move(message)};
  if (m_seen.insert(d.to_string()).second) m_list.push_back(std::move(d));
}

void Diags::sort() {
  std::vector<std::string> files;
  for (const auto& d : m_list)
    if (std::find(files.begin(), files.end(), d.file) == files.end()) files.push_back(d.file);
  auto rank = [&](const util::Diagnostic& d) {
    return std::find(files.begin(), files.end(), d.file) - files.begin();
  };
  std::stable_sort(m_list.begin(), m_list.end(), [&](const auto& a, const auto& b) {
    return std::tuple(rank(a), a.line, a.col) < std::tuple(rank(b), b.line, b.col);
  });
}

int edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

static bool is_abbreviation(std::string_view word, std::string_view of) {
  if (word.size() < 2 || word.size() >= of.size() || word[0] != of[0]) return false;
  std::size_t j = 0;
  for (char c : of)
    if (j < word.size() && c == word[j]) ++j;
  return j == word.size();
}

std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.size() > 200) return {};  // not a typo of a key; keep the quadratic cost bounded
  std::string best;
  int best_d = 0;
  for (const auto& c : candidates) {
    int d = edit_distance(word, c);
    if (best.empty() || d < best_d) best = c, best_d = d;
  }
  // A third of the longer word, at least one edit: "haed_dim" -> "head_dim".
  int limit = std::max<int>(1, static_cast<int>(std::max(word.size(), best.size())) / 3);
  if (!best.empty() && best_d <= limit) return best;
  // Abbreviations are far in edits but obvious to a reader: "hdim" -> "head_dim".
  std::string abbrev;
  for (const auto& c : candidates)
    if (is_abbreviation(word, c) && (abbrev.empty() || c.size() < abbrev.size())) abbrev = c;
  return abbrev;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string c = closest(word, candidates);
  return c.empty() ? std::string{} : fmt::format(" (did you mean \"{}\"?)", c);
}

}  // namespace attnprof::scenario
