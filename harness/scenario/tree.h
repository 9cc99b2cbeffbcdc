// A YAML document as a tree whose every node remembers the file and line it came from. yaml-cpp
// nodes lose their marks when copied into new maps, and a scenario is assembled from several
// files (extends:, top-level defaults merged into workloads), so messages need their own record
// of where each value was written.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"
#include "harness/scenario/diags.h"

namespace attnprof::scenario {

struct Node {
  enum class Kind { null, scalar, seq, map };
  Kind kind = Kind::null;
  std::string scalar;       // Kind::scalar
  std::vector<Node> items;  // seq elements, or map entries (each with key set), in file order
  std::string key;          // for a map entry: its key
  core::SourceLoc key_loc;  // for a map entry: where its key is
  core::SourceLoc loc;      // where the value is

  bool is_map() const { return kind == Kind::map; }
  bool is_seq() const { return kind == Kind::seq; }
  bool is_scalar() const { return kind == Kind::scalar; }
  const Node* find(std::string_view k) const;  // map entry by key, or null
  Node* find(std::string_view k);
};

// "a mapping", "a list", "a scalar", "nothing": for "expected X, got Y" messages.
const char* describe(const Node&);

// Parses YAML text. A syntax error becomes a diagnostic at its file:line:col and the result is
// a null node. Duplicate keys in a mapping are errors (yaml-cpp keeps both silently). Aliases
// are expanded (merge keys "<<: *x" included); an alias inside its own anchor, nesting deeper
// than 64 levels, and more than 200,000 values after expansion (a "billion laughs") are errors
// at the anchor, alias or key, never an exhausted stack or host.
Node parse_yaml(std::string_view text, const std::string& file, Diags& diags);

// `over` applied on top of `base`: mappings merge key by key (recursively); anything else in
// `over` replaces what `base` had.
Node merge(const Node& base, const Node& over);

}  // namespace attnprof::scenario
