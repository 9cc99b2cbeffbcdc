// Model geometry: the embedded presets (scenarios/models.yaml) and a scenario's own models:,
// read and checked alike (models.h).
#include "harness/scenario/models.h"

#include <fmt/format.h>

#include "harness/scenario/embedded.h"
#include "harness/scenario/scenario.h"
#include "harness/scenario/values.h"

namespace attnprof::scenario {

bool supported_head_dim(int d) {
  return d >= 8 && d <= 256 && d % 8 == 0;
}

void check_geometry(const core::Geometry& g, const core::SourceLoc& at, Diags& d) {
  if (g.heads > 0 && g.kv_heads > 0 && g.heads % g.kv_heads != 0)
    d.error(at, fmt::format("model {}: heads ({}) must be a multiple of kv_heads ({})", g.name,
                            g.heads, g.kv_heads));
  if (g.head_dim > 0 && !supported_head_dim(g.head_dim))
    d.error(at, fmt::format("model {}: unsupported head_dim {} (a multiple of 8, at most 256)",
                            g.name, g.head_dim));
  if (g.max_positions > 0 && g.sliding_window > g.max_positions)
    d.error(at, fmt::format("model {}: sliding_window {} exceeds max_positions {}", g.name,
                            g.sliding_window, g.max_positions));
}

static const std::vector<std::string> model_keys = {"base",           "heads",      "kv_heads",
                                                    "head_dim",       "hidden",     "max_positions",
                                                    "sliding_window", "mlp_hidden", "norm"};

static const core::Geometry* find_in(const std::vector<core::Geometry>& v, std::string_view n) {
  for (const auto& g : v)
    if (g.name == n) return &g;
  return nullptr;
}

static std::vector<std::string> names_of(const std::vector<core::Geometry>& a,
                                         const std::vector<core::Geometry>& b) {
  std::vector<std::string> out;
  for (const auto& g : a) out.push_back(g.name);
  for (const auto& g : b) out.push_back(g.name);
  return out;
}

void read_models(const Node& models, const std::vector<core::Geometry>& presets,
                 std::vector<core::Geometry>& out, Diags& d) {
  if (!models.is_map()) {
    d.error(models.loc,
            fmt::format("models: expected a mapping of name to geometry, {}", got(models)));
    return;
  }
  constexpr long long big = 1 << 24;
  for (const auto& e : models.items) {
    if (find_in(presets, e.key) || find_in(out, e.key)) {
      d.error(e.key_loc,
              fmt::format("model \"{}\" is already defined; give yours another name", e.key));
      continue;
    }
    if (!check_map(e, fmt::format("model {}", e.key), model_keys, d)) continue;
    core::Geometry g;
    bool complete = true;
    if (const Node* b = e.find("base")) {
      const core::Geometry* base = b->is_scalar() ? find_in(presets, b->scalar) : nullptr;
      if (!base && b->is_scalar()) base = find_in(out, b->scalar);
      if (!base) {
        d.error(b->loc,
                fmt::format("base: unknown model {}{}", got(*b),
                            b->is_scalar() ? did_you_mean(b->scalar, names_of(presets, out)) : ""));
        complete = false;
      } else {
        g = *base;
      }
    }
    g.name = e.key;
    auto int_field = [&](const char* key, int& field, long long min) {
      if (const Node* n = e.find(key)) {
        auto v = read_int(*n, key, min, big, d);
        if (v)
          field = static_cast<int>(*v);
        else
          complete = false;
      }
    };
    bool explicit_kv = e.find("kv_heads") != nullptr;
    bool explicit_hidden = e.find("hidden") != nullptr;
    bool explicit_mlp = e.find("mlp_hidden") != nullptr;
    int_field("heads", g.heads, 1);
    int_field("kv_heads", g.kv_heads, 1);
    int_field("head_dim", g.head_dim, 1);
    int_field("hidden", g.hidden, 1);
    int_field("max_positions", g.max_positions, 0);
    int_field("sliding_window", g.sliding_window, 0);
    int_field("mlp_hidden", g.mlp_hidden, 1);
    if (const Node* n = e.find("norm")) {
      auto v = read_choice(*n, "norm", {"layernorm", "rmsnorm"}, d);
      if (v) g.norm = *v;
    }
    for (auto [name, value] : {std::pair{"heads", g.heads}, std::pair{"head_dim", g.head_dim}}) {
      if (complete && value == 0) {
        d.error(e.key_loc, fmt::format("model {}: missing {}", e.key, name));
        complete = false;
      }
    }
    if (!complete) continue;
    // Derived defaults where neither given nor inherited from a base.
    const bool has_base = e.find("base") != nullptr;
    if (!explicit_kv && !has_base) g.kv_heads = g.heads;
    if (!explicit_hidden && !has_base) g.hidden = g.heads * g.head_dim;
    if (!explicit_mlp && !has_base) g.mlp_hidden = 4 * g.hidden;
    check_geometry(g, e.key_loc, d);
    out.push_back(std::move(g));
  }
}

const std::vector<core::Geometry>& model_presets() {
  static const std::vector<core::Geometry> presets = [] {
    Diags d;
    const std::string file = "<builtin>/models.yaml";
    Node root = parse_yaml(embedded_models(), file, d);
    std::vector<core::Geometry> out;
    read_models(root, {}, out, d);
    if (!d.empty()) d.raise();  // a broken built-in file is a build defect; tests catch it
    return out;
  }();
  return presets;
}

const core::Geometry* find_model(std::string_view name) {
  return find_in(model_presets(), name);
}

}  // namespace attnprof::scenario
