// Parsing YAML into a tree whose every node keeps the file, line and column it came from, and
// merging two such trees (tree.h).
#include "harness/scenario/tree.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>
#include <unordered_map>

namespace attnprof::scenario {

using namespace std::string_view_literals;

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
// A scenario nests four or five levels (workloads, a workload, measure:, a list); 64 leaves
// room for anything meant and keeps every recursive walk of the tree shallow.
constexpr std::size_t max_depth = 64;

core::SourceLoc loc_of(const YAML::Mark& m, const std::string& file) {
  if (m.is_null() || m.line < 0) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};  // yaml-cpp marks are 0-based
}

// Thrown by the builder to stop the parser after a diagnostic that leaves nothing to read on.
struct Abandon {};

// Builds the tree from yaml-cpp's parser events rather than from YAML::Load's node graph: an
// alias there is the anchored node itself, so "a: &w [*w]" is a graph with a cycle that any
// walk of it follows until the stack overflows, and its size after expanding aliases is only
// known by walking it. Here every alias is copied when it is read, with the size, depth and
// openness of its anchor known, so a cycle, a bomb or deep nesting is a diagnostic at the spot.
class Builder : public YAML::EventHandler {
 public:
  Builder(const std::string& file, Diags& diags) : m_file(file), m_diags(diags) {}

  Node result() { return std::move(m_root); }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnAnchor(const YAML::Mark& mark, const std::string& name) override {
    m_pending_anchor_name = name;
    m_pending_anchor_loc = loc_of(mark, m_file);
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Node n;
    n.loc = loc_of(mark, m_file);
    leaf(std::move(n), anchor);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    Node n;
    n.kind = Node::Kind::scalar;
    n.scalar = value;
    n.loc = loc_of(mark, m_file);
    // A plain << (tag "?") is a merge key; a quoted "<<" (tag "!") is just a word.
    leaf(std::move(n), anchor, tag == "?" && value == "<<");
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const core::SourceLoc at = loc_of(mark, m_file);
    auto it = m_anchors.find(anchor);
    if (it == m_anchors.end()) fatal(at, "alias to an unknown anchor");  // the parser checks
    const Anchor& a = it->second;
    if (a.open)
      fatal(a.loc, fmt::format("anchor &{} contains an alias to itself (*{} at line {}, column "
                               "{}): a node cannot include itself",
                               a.name, a.name, at.line, at.col));
    if (m_stack.size() + a.height > max_depth)
      fatal(at, fmt::format("alias *{} nests the document deeper than {} levels (anchor &{} at "
                            "line {})",
                            a.name, max_depth, a.name, a.loc.line));
    if (m_nodes + a.size > max_nodes)
      fatal(at, fmt::format("alias *{} expands the document beyond {} values (anchor &{} at line "
                            "{}, {} values each time it is used); a scenario this large is a "
                            "mistake",
                            a.name, max_nodes, a.name, a.loc.line, a.size));
    m_nodes += a.size;
    add(Node(a.node), a.height);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, Node::Kind::seq);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, Node::Kind::map);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Anchor {
    std::string name;
    core::SourceLoc loc;
    bool open = true;  // still being read: an alias to it now would make a cycle
    Node node;
    std::size_t size = 0, height = 0;
  };
  struct Frame {
    Node node;
    YAML::anchor_t anchor = 0;
    std::size_t first_node = 0;  // m_nodes when it opened: its size is the difference
    std::size_t height = 1;
    // Maps: keys and values alternate.
    bool want_key = true, skip_value = false, merge_value = false;
    std::string key;
    core::SourceLoc key_loc;
    std::unordered_map<std::string, int> key_lines;        // key -> line, for duplicates
    std::vector<std::pair<Node, core::SourceLoc>> merges;  // values of << keys, with the key
  };

  const std::string& m_file;
  Diags& m_diags;
  std::vector<Frame> m_stack;
  std::unordered_map<YAML::anchor_t, Anchor> m_anchors;
  std::string m_pending_anchor_name;
  core::SourceLoc m_pending_anchor_loc;
  std::size_t m_nodes = 0;
  Node m_root;

  [[noreturn]] void fatal(const core::SourceLoc& at, std::string message) {
    m_diags.error(at, std::move(message));
    throw Abandon{};
  }

  // The key of the innermost mapping entry being read: where a message about a value that is
  // too big can point (a list has no mark a reader would look for; its key does).
  const Frame* innermost_keyed() const {
    for (auto f = m_stack.rbegin(); f != m_stack.rend(); ++f)
      if (f->node.is_map() && !f->want_key) return &*f;
    return nullptr;
  }

  void count_node(const core::SourceLoc& at) {
    if (++m_nodes <= max_nodes) return;
    if (const Frame* f = innermost_keyed())
      fatal(f->key_loc, fmt::format("{}: more than {} values in the document; a scenario this "
                                    "large is a mistake",
                                    f->key, max_nodes));
    fatal(at, fmt::format("more than {} values in the document; a scenario this large is a "
                          "mistake",
                          max_nodes));
  }

  void register_anchor(YAML::anchor_t anchor, const core::SourceLoc& at) {
    if (!anchor) return;
    Anchor& a = m_anchors[anchor];
    a.name = m_pending_anchor_name;
    a.loc = m_pending_anchor_loc.line ? m_pending_anchor_loc : at;
    m_pending_anchor_name.clear();
    m_pending_anchor_loc = {};
  }

  void finish_anchor(YAML::anchor_t anchor, const Node& n, std::size_t size, std::size_t height) {
    if (!anchor) return;
    Anchor& a = m_anchors[anchor];
    a.open = false;
    a.node = n;
    a.size = size;
    a.height = height;
  }

  void leaf(Node n, YAML::anchor_t anchor, bool merge_key = false) {
    count_node(n.loc);
    register_anchor(anchor, n.loc);
    finish_anchor(anchor, n, 1, 1);
    add(std::move(n), 1, merge_key);
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, Node::Kind kind) {
    const core::SourceLoc at = loc_of(mark, m_file);
    if (m_stack.size() + 1 > max_depth)
      fatal(at, fmt::format("nested deeper than {} levels; a scenario needs far fewer", max_depth));
    count_node(at);
    register_anchor(anchor, at);
    Frame f;
    f.node.kind = kind;
    f.node.loc = at;
    f.anchor = anchor;
    f.first_node = m_nodes - 1;
    m_stack.push_back(std::move(f));
  }

  void close() {
    Frame f = std::move(m_stack.back());
    m_stack.pop_back();
    if (f.node.is_map()) apply_merges(f);
    finish_anchor(f.anchor, f.node, m_nodes - f.first_node, f.height);
    add(std::move(f.node), f.height);
  }

  // YAML's merge key: "<<: *defaults" (or a list of aliases) adds the entries of those mappings
  // that the mapping does not set itself; earlier mappings in the list win over later ones.
  void apply_merges(Frame& f) {
    for (auto& [value, key_loc] : f.merges) {
      std::vector<Node*> sources;
      if (value.is_map()) sources.push_back(&value);
      if (value.is_seq())
        for (auto& i : value.items) sources.push_back(&i);
      bool ok = !sources.empty();
      for (Node* s : sources) ok = ok && s->is_map();
      if (!ok) {
        m_diags.error(value.loc.line ? value.loc : key_loc,
                      fmt::format("<<: expected a mapping or a list of mappings to merge, got {}",
                                  describe(value)));
        continue;
      }
      for (Node* s : sources)
        for (auto& e : s->items)
          if (f.key_lines.emplace(e.key, e.key_loc.line).second)
            f.node.items.push_back(std::move(e));
    }
  }

  // A finished node (leaf, collection or copied alias) joins its parent.
  void add(Node n, std::size_t height, bool merge_key = false) {
    if (m_stack.empty()) {
      m_root = std::move(n);
      return;
    }
    Frame& f = m_stack.back();
    f.height = std::max(f.height, height + 1);
    if (f.node.is_seq()) {
      f.node.items.push_back(std::move(n));
      return;
    }
    if (f.want_key) {
      f.want_key = false;
      f.skip_value = false;
      f.merge_value = false;
      f.key_loc = n.loc;
      if (!n.is_scalar()) {
        m_diags.error(n.loc, "a key must be a plain word, not a list or a mapping");
        f.skip_value = true;
      } else if (merge_key) {
        f.merge_value = true;
      } else if (auto [it, fresh] = f.key_lines.emplace(n.scalar, n.loc.line); !fresh) {
        m_diags.error(n.loc,
                      fmt::format("duplicate key \"{}\" (first at line {})", n.scalar, it->second));
        f.skip_value = true;
      }
      f.key = std::move(n.scalar);
      return;
    }
    f.want_key = true;
    if (f.skip_value) return;
    if (f.merge_value) {
      f.merges.emplace_back(std::move(n), f.key_loc);
      return;
    }
    n.key = std::move(f.key);
    n.key_loc = f.key_loc;
    // An empty value ("key:") has no mark of its own (yaml-cpp gives the next token's): point
    // at the key.
    if (n.kind == Node::Kind::null || n.loc.line == 0) n.loc = f.key_loc;
    f.node.items.push_back(std::move(n));
  }
};

}  // namespace

namespace {

// The length of the UTF-8 sequence at text[i], or 0 when it is not one (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), as strict as the JSON writer that prints it.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = at(0);
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4)
    len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  if (len == 0 || i + len > text.size() || at(1) < lo || at(1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k)
    if (at(k) < 0x80 || at(k) > 0xBF) return 0;
  return len;
}

// Why `text` is not a UTF-8 text file, at the first spot that shows it, or nullopt. A UTF-16 or
// UTF-32 file is named by its byte-order mark or by its NUL bytes; any other NUL byte or byte
// sequence that is not UTF-8 is named where it is. Said once, briefly: yaml-cpp would parse
// on and quote the garbled document.
std::optional<std::pair<core::SourceLoc, std::string>> not_utf8(std::string_view text,
                                                                const std::string& file) {
  const auto starts = [&](std::string_view bom) { return text.starts_with(bom); };
  const char* wide = starts("\xFF\xFE\0\0"sv)                           ? "UTF-32 (little-endian)"
                     : starts("\0\0\xFE\xFF"sv)                         ? "UTF-32 (big-endian)"
                     : starts("\xFF\xFE")                               ? "UTF-16 (little-endian)"
                     : starts("\xFE\xFF")                               ? "UTF-16 (big-endian)"
                     : text.size() >= 2 && text[0] != 0 && text[1] == 0 ? "UTF-16 (little-endian)"
                     : text.size() >= 2 && text[0] == 0 && text[1] != 0 ? "UTF-16 (big-endian)"
                                                                        : nullptr;
  if (wide)
    return std::pair{core::SourceLoc{file, 0, 0},
                     fmt::format("the file is {}; scenario files are UTF-8 (convert it: iconv -f "
                                 "UTF-16 -t UTF-8)",
                                 wide)};
  int line = 1, col = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t len = utf8_length(text, i);
    if (len == 0 || c == 0)
      return std::pair{core::SourceLoc{file, line, col},
                       c == 0 ? std::string("a NUL byte: not a text file; scenario files are UTF-8")
                              : fmt::format("byte 0x{:02X} is not UTF-8; scenario files are "
                                            "UTF-8 text",
                                            c)};
    if (c == '\n') {
      ++line;
      col = 0;
    }
    ++col;
    i += len;
  }
  return std::nullopt;
}

}  // namespace

Node parse_yaml(std::string_view text, const std::string& file, Diags& diags) {
  if (auto why = not_utf8(text, file)) {
    diags.error(why->first, why->second);
    return {};
  }
  std::istringstream in{std::string(text)};
  Builder b(file, diags);
  try {
    YAML::Parser parser(in);
    parser.HandleNextDocument(b);
  } catch (const Abandon&) {
    return {};
  } catch (const YAML::Exception& e) {
    // e.msg is the bare message; e.what() repeats the position in yaml-cpp's own format.
    diags.error(loc_of(e.mark, file), fmt::format("YAML syntax error: {}", e.msg));
    return {};
  }
  Node n = b.result();
  if (n.loc.line == 0) n.loc = {file, 1, 1};
  return n;
}

Node merge(const Node& base, const Node& over) {
  if (!base.is_map() || !over.is_map()) return over;
  Node r = base;
  r.loc = over.loc;
  // Where each key of r sits: a mapping may hold many (mistaken) keys, and a lookup per key of
  // `over` would make merging quadratic in them.
  std::unordered_map<std::string, std::size_t> at;
  auto reindex = [&] {
    at.clear();
    for (std::size_t i = 0; i < r.items.size(); ++i) at.emplace(r.items[i].key, i);
  };
  reindex();
  // Keys that are two spellings of one setting (measure: warmup: 200ms or warmup_ms: 200): a
  // workload that overrides in the other spelling replaces the scenario's value.
  static const std::pair<std::string_view, std::string_view> synonyms[] = {
      {"warmup", "warmup_ms"}, {"time_budget", "timeout_s"}};
  for (const auto& e : over.items) {
    for (auto [a, b] : synonyms) {
      if (e.key == a || e.key == b) {
        std::string_view other = e.key == a ? b : a;
        std::erase_if(r.items, [&](const Node& x) { return x.key == other; });
        reindex();
      }
    }
    if (auto it = at.find(e.key); it != at.end()) {
      Node& mine = r.items[it->second];
      Node m = merge(mine, e);
      m.key = e.key;
      m.key_loc = e.key_loc;
      mine = std::move(m);
    } else {
      at.emplace(e.key, r.items.size());
      r.items.push_back(e);
    }
  }
  return r;
}

}  // namespace attnprof::scenario
