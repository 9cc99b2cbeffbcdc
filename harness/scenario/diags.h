// Collects every problem found in scenario files, so a user sees all of them at once, and
// proposes the nearest valid word for a misspelt one ("did you mean ...?").
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"
#include "harness/util/error.h"

namespace attnprof::scenario {

class Diags {
 public:
  // The same message at the same spot is kept once: a top-level setting that every workload
  // inherits would otherwise be reported once per workload.
  void error(const core::SourceLoc& at, std::string message);
  bool empty() const { return m_list.empty(); }
  std::size_t size() const { return m_list.size(); }
  // Every error() call, repeats included: "did this step fail?" is count() before != after,
  // which size() cannot tell when the failure repeats one already reported.
  std::size_t count() const { return m_calls; }
  // Orders the diagnostics by file (in order of first appearance), line and column, so they
  // read top to bottom whatever order the checks ran in.
  void sort();
  const std::vector<util::Diagnostic>& list() const { return m_list; }
  [[noreturn]] void raise() const { throw util::InputError(m_list); }

 private:
  std::vector<util::Diagnostic> m_list;
  std::set<std::string> m_seen;
  std::size_t m_calls = 0;
};

// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions, so "haeds" is
// one edit from "heads").
int edit_distance(std::string_view a, std::string_view b);
// The candidate nearest to `word` if it is close enough to be a plausible typo, else empty.
std::string closest(std::string_view word, const std::vector<std::string>& candidates);
// " (did you mean "x"?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace attnprof::scenario
