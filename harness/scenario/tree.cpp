#include "harness/scenario/tree.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace attnprof::scenario {

const Node* Node::find(std::string_view k) const {
  if (kind != Kind::map) return nullptr;
  for (const auto& e : items)
    if (e.key == k) return &e;
  return nullptr;
}

Node* Node::find(std::string_view k) {
  return const_cast<Node*>(static_cast<const Node*>(this)->find(k));
}

const char* describe(const Node& n) {
  switch (n.kind) {
    case Node::Kind::null:
      return "nothing";
    case Node::Kind::scalar:
      return "a scalar";
    case Node::Kind::seq:
      return "a list";
    case Node::Kind::map:
      return "a mapping";
  }
  return "?";
}

namespace {

// Far more than any real scenario; small enough that nested aliases cannot exhaust memory.
constexpr std::size_t max_nodes = 200000;

core::SourceLoc loc_of(const YAML::Mark& m, const std::string& file) {
  if (m.is_null() || m.line < 0) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};  // yaml-cpp marks are 0-based
}

struct Converter {
  const std::string& file;
  Diags& diags;
  std::size_t nodes = 0;
  bool too_big = false;

  Node convert(const YAML::Node& y) {
    Node n;
    n.loc = loc_of(y.Mark(), file);
    if (++nodes > max_nodes) {
      if (!too_big)
        diags.error(
            {file, 0, 0},
            fmt::format("document too large (over {} nodes after expanding aliases)", max_nodes));
      too_big = true;
      return n;
    }
    switch (y.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        n.kind = Node::Kind::null;
        break;
      case YAML::NodeType::Scalar:
        n.kind = Node::Kind::scalar;
        n.scalar = y.Scalar();
        break;
      case YAML::NodeType::Sequence:
        n.kind = Node::Kind::seq;
        for (const auto& item : y) {
          if (too_big) break;
          n.items.push_back(convert(item));
        }
        break;
      case YAML::NodeType::Map:
        n.kind = Node::Kind::map;
        for (const auto& kv : y) {
          if (too_big) break;
          const YAML::Node& k = kv.first;
          core::SourceLoc kloc = loc_of(k.Mark(), file);
          if (!k.IsScalar()) {
            diags.error(kloc, "a key must be a plain word, not a list or a mapping");
            continue;
          }
          if (const Node* first = n.find(k.Scalar())) {
            diags.error(kloc, fmt::format("duplicate key \"{}\" (first at line {})", k.Scalar(),
                                          first->key_loc.line));
            continue;
          }
          Node v = convert(kv.second);
          v.key = k.Scalar();
          v.key_loc = kloc;
          // An empty value ("key:") has no mark of its own in yaml-cpp; point at the key.
          if (v.loc.line == 0) v.loc = kloc;
          n.items.push_back(std::move(v));
        }
        break;
    }
    return n;
  }
};

}  // namespace

Node parse_yaml(std::string_view text, const std::string& file, Diags& diags) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    // e.msg is the bare message; e.what() repeats the position in yaml-cpp's own format.
    diags.error(loc_of(e.mark, file), fmt::format("YAML syntax error: {}", e.msg));
    return {};
  }
  Converter c{file, diags};
  Node n = c.convert(root);
  if (n.loc.line == 0) n.loc = {file, 1, 1};
  return n;
}

Node merge(const Node& base, const Node& over) {
  if (!base.is_map() || !over.is_map()) return over;
  Node r = base;
  r.loc = over.loc;
  // Keys that are two spellings of one setting (measure: warmup: 200ms or warmup_ms: 200): a
  // workload that overrides in the other spelling replaces the scenario's value.
  static const std::pair<std::string_view, std::string_view> synonyms[] = {
      {"warmup", "warmup_ms"}, {"time_budget", "timeout_s"}};
  for (const auto& e : over.items) {
    for (auto [a, b] : synonyms) {
      if (e.key == a || e.key == b) {
        std::string_view other = e.key == a ? b : a;
        std::erase_if(r.items, [&](const Node& x) { return x.key == other; });
      }
    }
    if (Node* mine = r.find(e.key)) {
      Node m = merge(*mine, e);
      m.key = e.key;
      m.key_loc = e.key_loc;
      *mine = std::move(m);
    } else {
      r.items.push_back(e);
    }
  }
  return r;
}

}  // namespace attnprof::scenario
