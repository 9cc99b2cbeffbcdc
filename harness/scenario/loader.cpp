// Loading a scenario: files (with their extends: bases) -> one tree per file -> workloads, each
// the top-level defaults merged with its own keys -> a matrix of cases (cartesian product of the
// list-valued keys, minus exclude:, plus include:) -> checked core::Cases with stable keys.
// Every problem becomes a diagnostic; load() throws them all together at the end.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fnmatch.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "harness/kernel/python.h"
#include "harness/kernel/score_mod.h"
#include "harness/scenario/diags.h"
#include "harness/scenario/models.h"
#include "harness/scenario/scenario.h"
#include "harness/scenario/settings.h"
#include "harness/scenario/tree.h"
#include "harness/scenario/values.h"

namespace attnprof::scenario {
namespace fs = std::filesystem;

namespace {

// Keys a workload may set, and the scenario's top level as defaults for every workload.
const std::vector<std::string> param_keys = {
    "model",    "phase",    "level",   "batch",  "seq_len",   "kv_len", "q_len",
    "seq_lens", "dtype",    "mask",    "window", "mask_file", "scale",  "seed",
    "kernels",  "hardware", "measure", "gate",   "reference", "kernel_args", "compile_cache",
    "prefix",   "score_mod"};
// The keys whose value may be a list, in the order the matrix varies them (the last fastest):
// case order then depends on the keys' values, not on the order they were written in.
const std::vector<std::string> axis_keys = {
    "model", "level", "batch",  "seq_len",   "kv_len", "q_len",  "dtype",
    "mask",  "window", "prefix", "score_mod", "scale",  "seed",  "kernels"};
const std::vector<std::string> top_only_keys = {"name",   "description", "extends",
                                                "models", "workloads",   "aliases"};
const std::vector<std::string> workload_only_keys = {"name", "include", "exclude"};

// Far beyond a real suite; a typo such as batch: [1, 2, ..., 4096] x seq_len x ... is not.
constexpr std::size_t max_cases_per_matrix = 100000;
constexpr long long max_len = 1 << 24;

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A scenario is a few kilobytes; a file far larger is a wrong path (a dataset, a log) that would
// only cost memory to parse.
constexpr std::uintmax_t max_file_bytes = 16u << 20;

// Reads a scenario file into `out`; on failure returns why ("cannot open file", ...).
std::optional<std::string> read_text(const std::string& path, std::string& out) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return "cannot open file";
  if (fs::file_size(path, ec) > max_file_bytes)
    return fmt::format("larger than {} MiB: not a scenario", max_file_bytes >> 20);
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open file";
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return std::nullopt;
}

bool is_glob(std::string_view s) {
  return s.find_first_of("*?[") != std::string_view::npos;
}

// Deterministic on every platform (std::uniform_int_distribution is not): splitmix64.
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct AliasRef {
  std::string alias;
  core::SourceLoc loc;
};

using Axes = std::vector<std::pair<std::string, std::vector<const Node*>>>;

// The values one case of a matrix is built from: its own value of each axis, else the
// workload's effective key (the top-level defaults merged with the workload's own).
struct CaseValues {
  const Node& eff;
  const std::map<std::string, const Node*>& chosen;
  const Node* operator()(const std::string& k) const {
    auto it = chosen.find(k);
    return it != chosen.end() ? it->second : eff.find(k);
  }
};

// Two values of an axis that are equal as values ("128" and "0128" as numbers) share this.
std::string value_identity(const std::string& s) {
  if (auto v = parse_number(s)) return fmt::format("#{}", *v == 0 ? 0.0 : *v);
  return "$" + s;
}

// exclude: entries as sets of axis positions, so that a case is tested only against the
// entries that can match it. Each entry is filed under the condition that matches the fewest
// values (its pivot); a case looks up the entries filed under its own values. A 20,000-value
// axis with an entry per value then costs one test per case instead of 20,000.
class ExcludeIndex {
 public:
  ExcludeIndex(const Axes& axes, const std::vector<const Node*>& excludes)
      : m_conds(excludes.size()), m_filed(axes.size()) {
    std::map<std::string, std::size_t> axis_of;
    std::vector<std::unordered_map<std::string, std::vector<std::size_t>>> by_value(axes.size());
    for (std::size_t a = 0; a < axes.size(); ++a) {
      axis_of[axes[a].first] = a;
      m_filed[a].resize(axes[a].second.size());
      for (std::size_t i = 0; i < axes[a].second.size(); ++i)
        by_value[a][value_identity(axes[a].second[i]->scalar)].push_back(i);
    }
    for (std::size_t e = 0; e < excludes.size(); ++e) {
      std::vector<Cond>& conds = m_conds[e];
      for (const auto& cond : excludes[e]->items) {
        auto ax = axis_of.find(cond.key);
        std::vector<const Node*> wanted;
        if (cond.is_scalar()) wanted.push_back(&cond);
        if (cond.is_seq())
          for (const auto& w : cond.items)
            if (w.is_scalar()) wanted.push_back(&w);
        Cond c{ax == axis_of.end() ? 0 : ax->second, {}};
        if (ax != axis_of.end()) {
          const auto& values = axes[c.axis].second;
          for (const Node* w : wanted) {
            if (cond.key == "kernels") {  // globs: test each kernel of the axis
              for (std::size_t i = 0; i < values.size(); ++i)
                if (fnmatch(w->scalar.c_str(), values[i]->scalar.c_str(), 0) == 0)
                  c.positions.push_back(i);
            } else if (auto it = by_value[c.axis].find(value_identity(w->scalar));
                       it != by_value[c.axis].end()) {
              c.positions.insert(c.positions.end(), it->second.begin(), it->second.end());
            }
          }
        }
        std::sort(c.positions.begin(), c.positions.end());
        c.positions.erase(std::unique(c.positions.begin(), c.positions.end()), c.positions.end());
        if (c.positions.empty()) {  // a condition nothing meets: the entry matches no case
          conds.clear();
          break;
        }
        conds.push_back(std::move(c));
      }
      if (conds.empty()) continue;
      const Cond& pivot = *std::min_element(conds.begin(), conds.end(), [](auto& x, auto& y) {
        return x.positions.size() < y.positions.size();
      });
      for (std::size_t i : pivot.positions) m_filed[pivot.axis][i].push_back(e);
    }
  }

  // Whether the case at axis positions `idx` is excluded; marks every entry that matches it as
  // used and counts the entries it tested in `checks`.
  bool exclude(const std::vector<std::size_t>& idx, std::vector<bool>& used,
               std::size_t& checks) const {
    bool excluded = false;
    for (std::size_t a = 0; a < m_filed.size(); ++a) {
      for (std::size_t e : m_filed[a][idx[a]]) {
        ++checks;
        bool all = true;
        for (const Cond& c : m_conds[e])
          all = all && std::binary_search(c.positions.begin(), c.positions.end(), idx[c.axis]);
        if (all) excluded = used[e] = true;
      }
    }
    return excluded;
  }

 private:
  struct Cond {
    std::size_t axis;
    std::vector<std::size_t> positions;  // sorted positions of the axis's values it matches
  };
  std::vector<std::vector<Cond>> m_conds;                      // per entry; empty: matches nothing
  std::vector<std::vector<std::vector<std::size_t>>> m_filed;  // axis -> position -> entries
};

class Loader {
 public:
  explicit Loader(const LoadOptions& opts) : m_opts(opts) {}

  void add_file(const std::string& path) {
    std::string text;
    if (auto why = read_text(path, text)) {
      m_diags.error({path, 0, 0}, *why);
      return;
    }
    add_text(text, path);
  }

  void add_text(std::string_view text, const std::string& file) {
    std::size_t before = m_diags.count();
    Node root = parse_yaml(text, file, m_diags);
    if (m_diags.count() != before) return;  // a syntax error, reported
    std::vector<std::string> stack{canonical(file)};
    root = resolve_extends(std::move(root), file, stack);
    expand_suite(root, file);
  }

  Suite finish(std::vector<std::string> files) {
    check_unique_keys();
    for (const auto& [at, entry] : m_reference_keys)
      if (!entry.second)
        m_diags.error(entry.first, "reference: this entry matches no case's kernel");
    for (const auto& [at, entry] : m_kernel_args_keys)
      if (!entry.second)
        m_diags.error(entry.first, "kernel_args: this entry matches no case's kernel");
    m_diags.sort();
    if (!m_diags.empty()) m_diags.raise();
    return Suite{std::move(m_cases), std::move(files), m_exclude_checks};
  }

 private:
  const LoadOptions& m_opts;
  Diags m_diags;
  std::vector<core::Case> m_cases;
  std::vector<AliasRef> m_aliases;
  std::deque<Node> m_synthetic;  // kernel names expanded from globs; stable addresses
  std::size_t m_exclude_checks = 0;
  // reference: mapping entries, by where their key is: (that spot, whether a case matched it).
  std::map<std::string, std::pair<core::SourceLoc, bool>> m_reference_keys;
  std::map<std::string, std::pair<core::SourceLoc, bool>> m_kernel_args_keys;  // likewise
  struct MaskShape {
    int rows = 0, cols = 0;
    std::string beyond;  // MaskFile::beyond
  };
  // (path, q_len, kv_len) -> what the file holds; nullopt: its problems are reported
  std::map<std::tuple<std::string, int, int>, std::optional<MaskShape>> m_masks;

  static std::string canonical(const std::string& path) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(path, ec);
    return ec ? path : p.string();
  }

  // extends: a file or list of files, relative to the file that names them; later ones and then
  // the file itself override earlier ones. A base's name, description and aliases stay its own.
  Node resolve_extends(Node root, const std::string& file, std::vector<std::string>& stack) {
    if (!root.is_map()) return root;
    const Node* ext = root.find("extends");
    if (!ext) return root;
    std::vector<const Node*> bases;
    if (ext->is_seq())
      for (const auto& i : ext->items) bases.push_back(&i);
    else
      bases.push_back(ext);
    Node merged;
    merged.kind = Node::Kind::map;
    for (const Node* b : bases) {
      if (!b->is_scalar() || b->scalar.empty()) {
        m_diags.error(b->loc, fmt::format("extends: expected a file name, {}", got(*b)));
        continue;
      }
      fs::path p = b->scalar;
      if (p.is_relative()) p = fs::path(file).parent_path() / p;
      std::string path = p.lexically_normal().string();
      std::string canon = canonical(path);
      if (std::find(stack.begin(), stack.end(), canon) != stack.end()) {
        std::string chain;
        for (const auto& s : stack) chain += fs::path(s).filename().string() + " -> ";
        m_diags.error(
            b->loc, fmt::format("extends: cycle {}{}", chain, fs::path(canon).filename().string()));
        continue;
      }
      std::string text;
      if (auto why = read_text(path, text)) {
        m_diags.error(b->loc, fmt::format("extends: {}: {}", path, *why));
        continue;
      }
      std::size_t before = m_diags.count();
      Node base = parse_yaml(text, path, m_diags);
      if (m_diags.count() != before) continue;
      if (!base.is_map()) {
        m_diags.error(base.loc, fmt::format("a scenario must be a mapping, {}", got(base)));
        continue;
      }
      stack.push_back(canon);
      base = resolve_extends(std::move(base), path, stack);
      stack.pop_back();
      std::erase_if(base.items, [](const Node& e) {
        return e.key == "name" || e.key == "description" || e.key == "aliases";
      });
      merged = merge(merged, base);
    }
    std::erase_if(root.items, [](const Node& e) { return e.key == "extends"; });
    Node out = merge(merged, root);
    out.loc = root.loc;
    return out;
  }

  // --- one suite --------------------------------------------------------------------------

  struct SuiteCtx {
    std::string name;
    std::string file;
    std::vector<core::Geometry> models;  // inline ones
  };

  void expand_suite(const Node& root, const std::string& file) {
    if (!root.is_map()) {
      m_diags.error(root.loc, fmt::format("a scenario must be a mapping (name:, model:, "
                                          "workloads:, ...), {}",
                                          got(root)));
      return;
    }
    check_map(root, "the scenario", concat(top_only_keys, param_keys), m_diags);
    SuiteCtx ctx;
    ctx.file = file;
    ctx.name = fs::path(file).stem().string();
    if (const Node* n = root.find("name"))
      if (auto s = read_string(*n, "name", m_diags)) ctx.name = *s;
    if (const Node* n = root.find("models")) read_models(*n, model_presets(), ctx.models, m_diags);

    Node defaults;
    defaults.kind = Node::Kind::map;
    for (const auto& e : root.items)
      if (std::find(param_keys.begin(), param_keys.end(), e.key) != param_keys.end())
        defaults.items.push_back(e);

    std::size_t first_case = m_cases.size();
    const Node* wls = root.find("workloads");
    if (!wls) {
      m_diags.error(root.loc, "no workloads: add a workloads: list");
    } else if (!wls->is_seq() || wls->items.empty()) {
      m_diags.error(wls->loc, fmt::format("workloads: expected a list of workloads, {}",
                                          wls->is_seq() ? "got an empty list" : got(*wls)));
    } else {
      for (std::size_t i = 0; i < wls->items.size(); ++i)
        expand_workload(ctx, defaults, wls->items[i], i);
    }
    if (const Node* a = root.find("aliases")) read_aliases(*a, first_case);
  }

  void expand_workload(const SuiteCtx& ctx, const Node& defaults, const Node& wl, std::size_t i) {
    if (!check_map(wl, "workload", concat(workload_only_keys, param_keys), m_diags)) return;
    Node own = wl;
    std::erase_if(own.items, [](const Node& e) {
      return std::find(workload_only_keys.begin(), workload_only_keys.end(), e.key) !=
             workload_only_keys.end();
    });
    Node eff = merge(defaults, own);
    eff.loc = wl.loc;

    std::string name;
    if (const Node* n = wl.find("name")) {
      if (auto s = read_string(*n, "name", m_diags)) name = *s;
    }
    if (name.empty()) {
      const Node* ph = eff.find("phase");
      name = ph && ph->is_scalar() ? ph->scalar : fmt::format("workload{}", i + 1);
    }

    const Node* exclude = wl.find("exclude");
    std::vector<const Node*> excludes;
    if (exclude) {
      if (!exclude->is_seq())
        m_diags.error(exclude->loc,
                      fmt::format("exclude: expected a list of mappings, {}", got(*exclude)));
      else
        for (const auto& e : exclude->items) {
          std::size_t before = m_diags.count();
          // One with a misspelt key is reported, not used: it would also "match no case".
          if (check_map(e, "exclude entry", axis_keys, m_diags) && m_diags.count() == before)
            excludes.push_back(&e);
        }
    }
    expand_matrix(ctx, name, eff, wl.loc, excludes);

    if (const Node* include = wl.find("include")) {
      if (!include->is_seq()) {
        m_diags.error(include->loc,
                      fmt::format("include: expected a list of mappings, {}", got(*include)));
        return;
      }
      // Each entry is a matrix of its own that takes what it does not set from the workload
      // (unlike GitHub Actions, it never extends existing combinations: it only adds cases).
      for (const auto& e : include->items) {
        if (!check_map(e, "include entry", param_keys, m_diags)) continue;
        Node inc = merge(eff, e);
        expand_matrix(ctx, name, inc, e.loc, {});
      }
    }
  }

  // --- the matrix ---------------------------------------------------------------------------

  std::vector<const Node*> expand_kernels(const Node& n) {
    std::vector<const Node*> out;
    std::vector<std::string> seen;
    auto add = [&](const Node* k) {
      if (std::find(seen.begin(), seen.end(), k->scalar) != seen.end()) return;
      seen.push_back(k->scalar);
      out.push_back(k);
    };
    static const std::regex op_re("op:[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_.]*");
    for (const Node* k : read_axis(n, "kernels", m_diags)) {
      const std::string& s = k->scalar;
      if (s.starts_with("aoti:")) {
        // A compiled package: the file is a build artifact (ci/aoti-package.sh makes it from
        // this scenario), so it need not exist yet; run checks that it does.
        if (s.size() > 9 && s.ends_with(".pt2"))
          add(k);
        else
          m_diags.error(k->loc,
                        fmt::format("kernel \"{}\": a compiled package is aoti:PATH.pt2", s));
      } else if (kernel::is_python(s)) {
        // A user's Python module: like a package, the file is checked when a run starts
        // (validate notes a missing one), the name's form and mode here.
        std::string why;
        if (kernel::parse_python(s, &why))
          add(k);
        else
          m_diags.error(k->loc, fmt::format("kernel \"{}\": {}", s, why));
      } else if (s.starts_with("op:")) {
        if (std::regex_match(s, op_re))
          add(k);
        else
          m_diags.error(k->loc, fmt::format("kernel \"{}\": a plugin op is op:namespace::name", s));
      } else if (is_glob(s)) {
        if (m_opts.kernels.empty()) {
          m_diags.error(k->loc, fmt::format("kernel pattern \"{}\" needs the kernel registry to "
                                            "expand; name the kernels",
                                            s));
          continue;
        }
        std::size_t matched = 0;
        for (const auto& name : m_opts.kernels) {
          if (fnmatch(s.c_str(), name.c_str(), 0) != 0) continue;
          Node& syn = m_synthetic.emplace_back(*k);
          syn.scalar = name;
          add(&syn);
          ++matched;
        }
        if (!matched)
          m_diags.error(k->loc, fmt::format("kernel pattern \"{}\" matches no kernel", s));
      } else if (!m_opts.kernels.empty() && std::find(m_opts.kernels.begin(), m_opts.kernels.end(),
                                                      s) == m_opts.kernels.end()) {
        m_diags.error(k->loc,
                      fmt::format("unknown kernel \"{}\"{}", s, did_you_mean(s, m_opts.kernels)));
      } else {
        add(k);
      }
    }
    return out;
  }

  void expand_matrix(const SuiteCtx& ctx, const std::string& workload, const Node& eff,
                     const core::SourceLoc& loc, const std::vector<const Node*>& excludes) {
    // Settings that are not axes are read once per matrix, into what its cases share.
    Diags& d = m_diags;
    core::Case shared;
    shared.suite = ctx.name;
    shared.workload = workload;
    shared.loc = loc;
    if (const Node* n = eff.find("hardware")) shared.hardware = read_hardware(*n, d);
    if (const Node* n = eff.find("measure")) shared.measure = read_measure(*n, d);
    if (const Node* n = eff.find("gate")) shared.gate = read_gate(*n, d);
    if (shared.measure.l2 == "cold" && shared.hardware.device == "cpu")  // measure.l2 is there
      d.error(eff.find("measure")->find("l2")->loc,
              "l2: cold needs a cuda device: the CPU timer flushes no cache, its samples are warm");

    Axes axes;
    for (const auto& key : axis_keys) {
      const Node* n = eff.find(key);
      if (!n) continue;
      auto values = key == "kernels" ? expand_kernels(*n) : read_axis(*n, key, d);
      if (values.empty()) return;  // reported
      axes.emplace_back(key, std::move(values));
    }
    if (!eff.find("kernels")) {
      Node& syn = m_synthetic.emplace_back();
      syn.kind = Node::Kind::scalar;
      syn.scalar = "sdpa.auto";
      syn.loc = loc;
      axes.emplace_back("kernels", std::vector<const Node*>{&syn});
    }
    std::size_t total = 1;
    for (const auto& [key, values] : axes) {
      total *= values.size();
      if (total > max_cases_per_matrix) {
        d.error(loc, fmt::format("the workload expands to more than {} cases; split it",
                                 max_cases_per_matrix));
        return;
      }
    }

    const ExcludeIndex index(axes, excludes);
    std::vector<bool> exclude_used(excludes.size(), false);
    std::vector<std::size_t> idx(axes.size(), 0);
    std::map<std::string, const Node*> chosen;
    for (std::size_t n = 0; n < total; ++n) {
      chosen.clear();
      for (std::size_t a = 0; a < axes.size(); ++a) chosen[axes[a].first] = axes[a].second[idx[a]];
      if (!index.exclude(idx, exclude_used, m_exclude_checks))
        build_case(ctx, shared, CaseValues{eff, chosen});
      // Odometer: the last axis varies fastest.
      for (std::size_t a = axes.size(); a-- > 0;) {
        if (++idx[a] < axes[a].second.size()) break;
        idx[a] = 0;
      }
    }
    for (std::size_t e = 0; e < excludes.size(); ++e)
      if (!exclude_used[e]) d.error(excludes[e]->loc, "exclude entry matches no case");
  }

  // One case of a matrix: `c` holds what the matrix's cases share; the values read here are
  // checked, and a case with any error is reported and left out.
  void build_case(const SuiteCtx& ctx, core::Case c, const CaseValues& get) {
    Diags& d = m_diags;
    const std::size_t errors_before = d.count();
    c.kernel = get("kernels")->scalar;
    if (const Node* r = get("reference")) read_reference(*r, c);
    if (const Node* a = get("kernel_args")) read_kernel_args(*a, c);
    if (const Node* cc = get("compile_cache"))
      if (auto s = read_choice(*cc, "compile_cache", {"fresh", "warm"}, d))
        c.compile_cache_warm = *s == "warm";
    if (!read_model(ctx, get("model"), c)) return;
    if (!read_phase(get, c)) return;
    if (const Node* l = get("level")) {
      auto s = read_choice(*l, "level", core::names_of(core::kLevelNames), d);
      if (s) c.level = *core::parse_level(*s);
    }
    const Node* batch = get("batch");
    if (batch)
      if (auto v = read_int(*batch, "batch", 1, 1 << 20, d)) c.batch = static_cast<int>(*v);

    const Node* len_node = read_lengths(get, c);  // where the attended length was set
    if (const Node* sl = get("seq_lens")) {
      // Under mask document the lengths are documents packed into each sequence, not the
      // valid lengths of padded ones.
      const Node* m = get("mask");
      if (m && m->is_scalar() && m->scalar == core::to_string(core::MaskKind::document))
        read_documents(*sl, c, len_node);
      else
        read_seq_lens(*sl, batch, c, len_node);
    }
    if (c.phase == core::Phase::prefill && c.q_len == 0 && d.count() == errors_before)
      d.error(c.loc, "prefill needs seq_len");
    if (c.model.max_positions > 0 && c.kv_len > c.model.max_positions)
      d.error(len_node ? len_node->loc : c.loc,
              fmt::format("{} {} exceeds the maximum positions of {} ({})",
                          c.phase == core::Phase::prefill ? "seq_len" : "kv_len", c.kv_len,
                          c.model.name, c.model.max_positions));

    if (const Node* t = get("dtype")) {
      auto s = read_choice(*t, "dtype", core::names_of(core::kDTypeNames), d);
      if (s) c.dtype = *core::parse_dtype(*s);
    }
    read_mask(ctx, get, c, c.loc);
    if (const Node* sm = get("score_mod")) {
      std::string why;
      if (!sm->is_scalar())
        d.error(sm->loc, fmt::format("score_mod: expected one of {}, {}",
                                     fmt::join(kernel::score_mod_forms(), ", "), got(*sm)));
      else if (!kernel::parse_score_mod(sm->scalar, &why))
        d.error(sm->loc, "score_mod: " + why);
      else if (sm->scalar != "none")
        c.score_mod = sm->scalar;
    }
    if (const Node* s = get("scale")) c.scale = read_positive(*s, "scale", d);
    if (const Node* s = get("seed"))
      if (auto v = read_int(*s, "seed", 0, std::numeric_limits<long long>::max(), d))
        c.seed = static_cast<std::uint64_t>(*v);

    if (d.count() != errors_before) return;
    c.key = case_key(c);
    m_cases.push_back(std::move(c));
  }

  // A mapping entry's key spot, for the "matches no case" check of mappings keyed by kernel.
  static std::string spot(const core::SourceLoc& l) {
    return l.file + ":" + std::to_string(l.line) + ":" + std::to_string(l.col);
  }

  // A scalar as the value of a Python argument: JSON where it reads as JSON (numbers, true,
  // null, lists), else the text; mappings and lists element by element. As `attnprof package
  // --arg NAME=VALUE` reads VALUE.
  static nlohmann::json argument_value(const Node& n) {
    if (n.is_map()) {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& e : n.items) o[e.key] = argument_value(e);
      return o;
    }
    if (n.is_seq()) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& e : n.items) a.push_back(argument_value(e));
      return a;
    }
    if (!n.is_scalar()) return nullptr;
    nlohmann::json j = nlohmann::json::parse(n.scalar, nullptr, /*allow_exceptions=*/false);
    return j.is_discarded() ? nlohmann::json(n.scalar) : j;
  }

  // kernel_args: the constructor (or factory) arguments of Python kernels, a mapping from
  // kernel (or glob) to a mapping of NAME: VALUE; the first entry that matches the case's
  // kernel wins. Stored with the case (its params), not in its key.
  void read_kernel_args(const Node& n, core::Case& c) {
    if (!n.is_map()) {
      m_diags.error(n.loc, fmt::format("kernel_args: expected a mapping from kernel to its "
                                       "arguments (NAME: VALUE), {}",
                                       got(n)));
      return;
    }
    // The case's kernel's entry, and its py: reference's (checked in fp32 with its own).
    for (auto [name, out] : {std::pair{&c.kernel, &c.kernel_args},
                             std::pair{&c.reference, &c.reference_args}}) {
      const Node* chosen = nullptr;
      for (const auto& e : n.items) {
        auto& [at, used] = m_kernel_args_keys[spot(e.key_loc)];
        at = e.key_loc;
        if (!chosen && !name->empty() && fnmatch(e.key.c_str(), name->c_str(), 0) == 0) {
          used = true;
          chosen = &e;
        }
      }
      if (!chosen) continue;
      if (const auto py = kernel::parse_python(*name); !py || py->builtin()) {
        m_diags.error(chosen->key_loc,
                      fmt::format("kernel_args: kernel \"{}\" is no Python kernel (only "
                                  "py:PATH.py:NAME kernels take arguments)",
                                  *name));
        return;
      }
      if (!chosen->is_map()) {
        m_diags.error(chosen->loc, fmt::format("kernel_args: \"{}\": expected a mapping of "
                                               "NAME: VALUE, {}",
                                               chosen->key, got(*chosen)));
        return;
      }
      *out = argument_value(*chosen).dump();
    }
  }

  // reference: what the case's output is checked against before it is timed: one name for every
  // kernel of the workload, or a mapping from kernel (or glob) to name, the first matching
  // entry winning. Empty (the default): sdpa.math. "none": not checked.
  void read_reference(const Node& n, core::Case& c) {
    const Node* value = nullptr;
    if (n.is_scalar()) {
      value = &n;
    } else if (n.is_map()) {
      for (const auto& e : n.items) {
        auto& [at, used] = m_reference_keys[spot(e.key_loc)];
        at = e.key_loc;
        if (!value && fnmatch(e.key.c_str(), c.kernel.c_str(), 0) == 0) {
          used = true;
          value = &e;
        }
      }
    } else {
      m_diags.error(n.loc, fmt::format("reference: expected a kernel name, or a mapping from "
                                       "kernel to reference, {}",
                                       got(n)));
    }
    if (!value) return;
    auto s = read_string(*value, "reference", m_diags);
    if (!s) return;
    const std::string& r = *s;
    if (r == c.kernel) {
      m_diags.error(value->loc, fmt::format("reference: kernel \"{}\" cannot be its own "
                                            "reference (name another kernel, or none)",
                                            r));
      return;
    }
    static const std::regex op_re("op:[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_.]*");
    const bool known =
        r == "none" || (r.starts_with("aoti:") && r.size() > 9 && r.ends_with(".pt2")) ||
        std::regex_match(r, op_re) || kernel::parse_python(r) || m_opts.kernels.empty() ||
        std::find(m_opts.kernels.begin(), m_opts.kernels.end(), r) != m_opts.kernels.end();
    if (!known) {
      std::vector<std::string> names = m_opts.kernels;
      names.push_back("none");
      m_diags.error(value->loc, fmt::format("reference: unknown kernel \"{}\"{}; a reference is "
                                            "a kernel, aoti:PATH.pt2, py:PATH.py:NAME, op:ns::name or none",
                                            r, did_you_mean(r, names)));
      return;
    }
    c.reference = r == "sdpa.math" ? "" : r;
  }

  // The scenario's own models first, then the presets; false (reported) when none is named or
  // the name is unknown.
  bool read_model(const SuiteCtx& ctx, const Node* m, core::Case& c) {
    if (!m) {
      m_diags.error(c.loc, "no model: set model: in the workload or at the top level");
      return false;
    }
    const core::Geometry* g = nullptr;
    for (const auto& x : ctx.models)
      if (x.name == m->scalar) g = &x;
    if (!g) g = find_model(m->scalar);
    if (g) {
      c.model = *g;
      return true;
    }
    std::vector<std::string> names;
    for (const auto& x : ctx.models) names.push_back(x.name);
    for (const auto& x : model_presets()) names.push_back(x.name);
    m_diags.error(m->loc,
                  fmt::format("unknown model \"{}\"{}", m->scalar, did_you_mean(m->scalar, names)));
    return false;
  }

  // Phase: given, else the workload's name when that is a phase, else decode when only a KV
  // length is given. False (reported) for a phase: that is not one.
  bool read_phase(const CaseValues& get, core::Case& c) {
    if (const Node* p = get("phase")) {
      auto s = read_choice(*p, "phase", core::names_of(core::kPhaseNames), m_diags);
      if (!s) return false;
      c.phase = *core::parse_phase(*s);
    } else if (c.workload == "decode" || c.workload == "prefill") {
      c.phase = c.workload == "decode" ? core::Phase::decode : core::Phase::prefill;
    } else {
      c.phase = get("kv_len") && !get("seq_len") ? core::Phase::decode : core::Phase::prefill;
    }
    return true;
  }

  // Sequence lengths: seq_len for prefill, kv_len and q_len for decode; a key of the other phase
  // is an error. Returns the node that set the attended length (for messages), or null.
  const Node* read_lengths(const CaseValues& get, core::Case& c) {
    Diags& d = m_diags;
    const Node* seq_len = get("seq_len");
    const Node* kv_len = get("kv_len");
    const Node* q_len = get("q_len");
    const Node* len_node = nullptr;
    if (c.phase == core::Phase::prefill) {
      if (kv_len)
        d.error(kv_len->loc, "kv_len applies to decode workloads (prefill attends over seq_len)");
      if (q_len)
        d.error(q_len->loc, "q_len applies to decode workloads (prefill has q_len = seq_len)");
      if (seq_len) {
        if (auto v = read_int(*seq_len, "seq_len", 1, max_len, d))
          c.q_len = c.kv_len = static_cast<int>(*v);
        len_node = seq_len;
      }
      return len_node;
    }
    if (seq_len)
      d.error(seq_len->loc, "seq_len applies to prefill workloads (decode uses kv_len and q_len)");
    if (kv_len) {
      if (auto v = read_int(*kv_len, "kv_len", 1, max_len, d)) c.kv_len = static_cast<int>(*v);
      len_node = kv_len;
    } else {
      d.error(c.loc, "decode needs kv_len (the length of the KV cache)");
    }
    c.q_len = 1;
    if (q_len)
      if (auto v = read_int(*q_len, "q_len", 1, max_len, d)) c.q_len = static_cast<int>(*v);
    if (c.kv_len > 0 && c.q_len > c.kv_len)
      d.error(q_len->loc, fmt::format("q_len {} exceeds kv_len {}", c.q_len, c.kv_len));
    return len_node;
  }

  // seq_lens: an explicit list (one length per sequence; batch defaults to its size) or a
  // distribution {distribution: uniform, min, max, seed} drawn per case. Lengths are the valid
  // keys of each sequence; the case's q_len/kv_len stay the padded maximum.
  void read_seq_lens(const Node& n, const Node* batch, core::Case& c, const Node*& len_node) {
    Diags& d = m_diags;
    const bool prefill = c.phase == core::Phase::prefill;
    if (n.is_seq()) {
      std::vector<int> lens;
      for (const auto& i : n.items)
        if (auto v = read_int(i, "seq_lens", 1, max_len, d)) lens.push_back(static_cast<int>(*v));
      if (lens.size() != n.items.size()) return;
      if (lens.empty()) {
        d.error(n.loc, "seq_lens: the list is empty");
        return;
      }
      if (!batch)
        c.batch = static_cast<int>(lens.size());
      else if (c.batch != static_cast<int>(lens.size()))
        d.error(n.loc,
                fmt::format("seq_lens has {} lengths but batch is {}", lens.size(), c.batch));
      int longest = *std::max_element(lens.begin(), lens.end());
      if (prefill && c.q_len == 0) {  // no seq_len: pad to the longest
        c.q_len = c.kv_len = longest;
        len_node = &n;
      }
      if (c.kv_len > 0 && longest > c.kv_len)
        d.error(n.loc, fmt::format("seq_lens: length {} exceeds {} {}", longest,
                                   prefill ? "seq_len" : "kv_len", c.kv_len));
      c.seq_lens = std::move(lens);
      return;
    }
    if (!check_map(n, "seq_lens", {"distribution", "min", "max", "seed"}, d)) return;
    if (const Node* k = n.find("distribution")) read_choice(*k, "distribution", {"uniform"}, d);
    if (c.kv_len == 0) {
      d.error(n.loc,
              fmt::format("seq_lens: a distribution needs {}", prefill ? "seq_len" : "kv_len"));
      return;
    }
    long long lo = 1, hi = c.kv_len;
    std::uint64_t seed = c.seed;
    if (const Node* k = n.find("min")) lo = read_int(*k, "min", 1, max_len, d).value_or(lo);
    if (const Node* k = n.find("max")) hi = read_int(*k, "max", 1, max_len, d).value_or(hi);
    if (const Node* k = n.find("seed"))
      seed = read_int(*k, "seed", 0, std::numeric_limits<long long>::max(), d).value_or(0);
    if (hi > c.kv_len) {
      d.error(n.find("max")->loc, fmt::format("seq_lens: max {} exceeds {} {}", hi,
                                              prefill ? "seq_len" : "kv_len", c.kv_len));
      return;
    }
    if (lo > hi) {
      d.error(n.loc, fmt::format("seq_lens: min {} exceeds max {}", lo, hi));
      return;
    }
    std::uint64_t state = seed;
    c.seq_lens.resize(c.batch);
    for (int& len : c.seq_lens)
      len = static_cast<int>(
          lo + static_cast<long long>(splitmix64(state) % static_cast<std::uint64_t>(hi - lo + 1)));
  }

  // seq_lens under mask document: the lengths of the documents packed into every sequence of
  // the batch, in order; they fill it (seq_len, or kv_len for decode, is their sum).
  void read_documents(const Node& n, core::Case& c, const Node*& len_node) {
    Diags& d = m_diags;
    const bool prefill = c.phase == core::Phase::prefill;
    if (!n.is_seq() || n.items.empty()) {
      d.error(n.loc, "seq_lens: mask document needs the documents' lengths as a list "
                     "(seq_lens: [100, 28], packed into each sequence)");
      return;
    }
    std::vector<int> lens;
    long long sum = 0;
    for (const auto& i : n.items)
      if (auto v = read_int(i, "seq_lens", 1, max_len, d)) {
        lens.push_back(static_cast<int>(*v));
        sum += *v;
      }
    if (lens.size() != n.items.size()) return;
    if (prefill && c.q_len == 0 && sum <= max_len) {  // no seq_len: the documents' sum
      c.q_len = c.kv_len = static_cast<int>(sum);
      len_node = &n;
    }
    if (sum != c.kv_len) {
      d.error(n.loc, fmt::format("seq_lens: the documents' lengths sum to {}, {} is {} (mask "
                                 "document packs them into each sequence, filling it)",
                                 sum, prefill ? "seq_len" : "kv_len", c.kv_len));
      return;
    }
    c.documents = std::move(lens);
  }

  void read_mask(const SuiteCtx& ctx, const CaseValues& get, core::Case& c,
                 const core::SourceLoc& loc) {
    Diags& d = m_diags;
    const Node* m = get("mask");
    const Node* w = get("window");
    const Node* f = get("mask_file");
    if (m) {
      auto s = read_choice(*m, "mask", core::names_of(core::kMaskNames), d);
      if (!s) return;
      c.mask = *core::parse_mask(*s);
    }
    // Variable lengths always mask the padding; "none" would misdescribe the case.
    if (!c.seq_lens.empty() && c.mask == core::MaskKind::none) c.mask = core::MaskKind::padding;
    if (c.mask == core::MaskKind::padding && c.seq_lens.empty())
      d.error(m ? m->loc : loc, "mask padding needs seq_lens (the valid length of each sequence)");
    if (w && c.mask != core::MaskKind::sliding_window)
      d.error(w->loc, "window applies only to mask sliding_window");
    if (c.mask == core::MaskKind::sliding_window) {
      if (w) {
        if (auto v = read_int(*w, "window", 1, max_len, d)) c.window = static_cast<int>(*v);
      } else if (c.model.sliding_window > 0) {
        c.window = c.model.sliding_window;
      } else {
        d.error(m->loc, fmt::format("mask sliding_window needs a window: set window: or use a "
                                    "model with sliding_window ({} has none)",
                                    c.model.name));
      }
      if (c.window > 0 && c.kv_len > 0 && c.window >= c.kv_len)
        d.error(w ? w->loc : m->loc,
                fmt::format("window {} is not smaller than the sequence ({}): the mask is plain "
                            "causal; use mask causal",
                            c.window, c.kv_len));
    }
    if (c.mask == core::MaskKind::document && c.documents.empty() && !get("seq_lens"))
      d.error(m->loc, "mask document needs seq_lens: the lengths of the documents packed into "
                      "each sequence");
    const Node* pre = get("prefix");
    if (pre && c.mask != core::MaskKind::prefix)
      d.error(pre->loc, "prefix applies only to mask prefix");
    if (c.mask == core::MaskKind::prefix) {
      if (!pre)
        d.error(m->loc, "mask prefix needs prefix: N (the first N keys, which every query sees)");
      else if (auto v = read_int(*pre, "prefix", 1, std::max(1, c.kv_len), d))
        c.prefix = static_cast<int>(*v);
    }
    if (f && c.mask != core::MaskKind::custom)
      d.error(f->loc, "mask_file applies only to mask custom");
    if (c.mask == core::MaskKind::custom) {
      if (!f) {
        d.error(m->loc, "mask custom needs mask_file: (an additive mask file)");
      } else if (auto s = read_string(*f, "mask_file", d)) {
        fs::path p = *s;
        if (p.is_relative()) p = fs::path(f->loc.file).parent_path() / p;
        std::error_code ec;
        if (!fs::is_regular_file(p, ec))
          d.error(f->loc,
                  fmt::format("mask_file: {}: cannot open file", p.lexically_normal().string()));
        else
          c.mask_file = fs::absolute(p, ec).lexically_normal().string();
        if (!c.mask_file.empty()) check_mask_file(*f, c);
      }
    }
    (void)ctx;
  }

  // The file's own problems are reported once, at the file; a shape that does not fit a case,
  // at the mask_file: key, once per distinct shape. The file is read once per shape it is
  // checked against, since what a read may hold is bounded by the shape.
  void check_mask_file(const Node& key, const core::Case& c) {
    auto [it, fresh] = m_masks.try_emplace({c.mask_file, c.q_len, c.kv_len});
    if (fresh) {
      try {
        MaskFile m = read_mask_file(c.mask_file, c.q_len, c.kv_len);
        it->second = MaskShape{m.rows, m.cols, m.beyond};
      } catch (const util::InputError& e) {
        for (const auto& diag : e.diagnostics())
          m_diags.error({diag.file, diag.line, diag.col}, diag.message);
      }
    }
    if (!it->second) return;  // reported
    const MaskShape& m = *it->second;
    if (!m.beyond.empty())
      m_diags.error(key.loc,
                    fmt::format("mask_file {} {}; this case needs q_len x kv_len = {} x {}",
                                key.scalar, m.beyond, c.q_len, c.kv_len));
    else if (m.rows != c.q_len || m.cols != c.kv_len)
      m_diags.error(key.loc, fmt::format("mask_file {} has {} rows of {} values; this case needs "
                                         "q_len x kv_len = {} x {}",
                                         key.scalar, m.rows, m.cols, c.q_len, c.kv_len));
  }

  // aliases: {current key: earlier key or [keys]}; "prefix/*": "old-prefix/*" renames many.
  void read_aliases(const Node& n, std::size_t first_case) {
    Diags& d = m_diags;
    if (!n.is_map()) {
      d.error(n.loc,
              fmt::format("aliases: expected a mapping of case key to earlier keys, {}", got(n)));
      return;
    }
    std::vector<std::string> keys;
    for (std::size_t i = first_case; i < m_cases.size(); ++i) keys.push_back(m_cases[i].key);
    for (const auto& e : n.items) {
      std::vector<const Node*> olds = read_axis(e, "aliases", d);
      const bool prefix = e.key.ends_with("*");
      std::string stem = prefix ? e.key.substr(0, e.key.size() - 1) : e.key;
      std::size_t hits = 0;
      for (std::size_t i = first_case; i < m_cases.size(); ++i) {
        core::Case& c = m_cases[i];
        if (prefix ? !c.key.starts_with(stem) : c.key != e.key) continue;
        ++hits;
        for (const Node* o : olds) {
          if (prefix && !o->scalar.ends_with("*")) {
            d.error(o->loc, "aliases: a prefix alias (ending in *) needs a prefix (ending in *)");
            continue;
          }
          std::string alias =
              prefix ? o->scalar.substr(0, o->scalar.size() - 1) + c.key.substr(stem.size())
                     : o->scalar;
          c.aliases.push_back(alias);
          m_aliases.push_back({alias, o->loc});
        }
      }
      if (!hits)
        d.error(e.key_loc, prefix ? fmt::format("aliases: no case key starts with \"{}\"", stem)
                                  : fmt::format("aliases: no case has the key \"{}\"{}", e.key,
                                                did_you_mean(e.key, keys)));
    }
  }

  void check_unique_keys() {
    std::map<std::string, const core::Case*> seen;
    for (const auto& c : m_cases) {
      auto [it, fresh] = seen.emplace(c.key, &c);
      if (!fresh) {
        const core::SourceLoc& o = it->second->loc;
        m_diags.error(c.loc, fmt::format("duplicate case key \"{}\" (also at {}:{}:{})", c.key,
                                         o.file, o.line, o.col));
      }
    }
    for (const auto& a : m_aliases)
      if (seen.count(a.alias))
        m_diags.error(a.loc, fmt::format("alias \"{}\" is the key of a current case", a.alias));
  }
};

}  // namespace

Suite load(const std::vector<std::string>& paths, const LoadOptions& opts) {
  Loader l(opts);
  for (const auto& p : paths) l.add_file(p);
  return l.finish(paths);
}

Suite load_text(std::string_view yaml, std::string_view file_name, const LoadOptions& opts) {
  Loader l(opts);
  l.add_text(yaml, std::string(file_name));
  return l.finish({std::string(file_name)});
}

}  // namespace attnprof::scenario
