// Baseline files (baseline.h): parsed with every problem named at file:line:col, made from
// stored runs, and written back as YAML.
#include "harness/gate/baseline.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/core/stability.h"
#include "harness/gate/timing_mode.h"
#include "harness/stats/quantile.h"
#include "harness/stats/summary.h"
#include "harness/util/error.h"

namespace attnprof::gate {

const BaselineCase* Baseline::find(const core::Case& c, std::string* matched_key) const {
  auto hit = [&](const std::string& key) -> const BaselineCase* {
    auto it = cases.find(key);
    if (it == cases.end()) return nullptr;
    if (matched_key) *matched_key = key;
    return &it->second;
  };
  if (auto* b = hit(c.key)) return b;
  for (const auto& alias : c.aliases)
    if (auto* b = hit(alias)) return b;
  return nullptr;
}

namespace {

// Collects diagnostics while walking the document, so one pass reports every mistake.
class Parser {
 public:
  explicit Parser(std::string path) : m_path(std::move(path)) {}

  void error(const YAML::Mark& m, std::string message) {
    // yaml-cpp marks are 0-based.
    m_diags.push_back({m_path, m.line + 1, m.column + 1, std::move(message)});
  }
  const std::vector<util::Diagnostic>& diagnostics() const { return m_diags; }

  std::string scalar(const YAML::Node& n, const std::string& key) {
    if (!n.IsScalar()) {
      error(n.Mark(), fmt::format("\"{}\" must be a string", key));
      return {};
    }
    return n.Scalar();
  }

  // A finite number > 0 (or >= 0 when zero_ok).
  bool number(const YAML::Node& n, const std::string& what, double& out, bool zero_ok = false) {
    if (n.IsScalar()) {
      const std::string& s = n.Scalar();
      char* end = nullptr;
      errno = 0;
      double v = std::strtod(s.c_str(), &end);
      if (!s.empty() && end == s.c_str() + s.size() && errno == 0 && std::isfinite(v) &&
          (v > 0 || (zero_ok && v == 0))) {
        out = v;
        return true;
      }
      error(n.Mark(), fmt::format("{} must be a {} number, got \"{}\"", what,
                                  zero_ok ? "non-negative" : "positive", s));
      return false;
    }
    error(n.Mark(), fmt::format("{} must be a number", what));
    return false;
  }

  // A list of positive numbers, appended to `out`.
  void numbers(const YAML::Node& v, const std::string& key, const std::string& what,
               std::vector<double>& out) {
    if (!v.IsSequence()) {
      error(v.Mark(), fmt::format("{} must be a list of numbers", key));
      return;
    }
    for (const auto& e : v) {
      double d = 0;
      if (number(e, what, d)) out.push_back(d);
    }
  }

  // What the case ran and how accurate it was (findings.h); false when `k` is none of them.
  bool trait(const std::string& k, const YAML::Node& v, Traits& t) {
    double d = 0;
    if (k == "backend") {
      t.backend = scalar(v, k);
    } else if (k == "reference") {
      t.reference = scalar(v, k);
    } else if (k == "max_abs_error" || k == "mean_abs_error") {
      if (number(v, k, d, true)) (k == "max_abs_error" ? t.max_abs_error : t.mean_abs_error) = d;
    } else if (k == "joules_per_call") {
      if (number(v, k, d, true)) t.joules_per_call = d;
    } else if (k == "compile_ms" || k == "compile_graphs" || k == "compile_graph_breaks") {
      if (number(v, k, d, true))
        (k == "compile_ms"       ? t.compile_ms
         : k == "compile_graphs" ? t.compile_graphs
                                 : t.compile_graph_breaks) = d;
    } else if (k == "kernels") {
      if (!v.IsSequence()) {
        error(v.Mark(), "kernels must be a list of names");
        return true;
      }
      t.kernels.emplace();  // each once, in the order written (outermost first when written)
      std::set<std::string> seen;
      for (const auto& e : v)
        if (std::string name = scalar(e, "a kernel"); seen.insert(name).second)
          t.kernels->push_back(std::move(name));
    } else {
      return false;
    }
    return true;
  }

  BaselineCase parse_case(const std::string& key, const YAML::Node& node) {
    BaselineCase c;
    c.line = node.Mark().line + 1;
    if (!node.IsMap()) {
      error(node.Mark(), fmt::format("case \"{}\" must be a mapping with median_ns", key));
      return c;
    }
    bool have_median = false, saw_median = false, have_n = false;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string k = it->first.Scalar();
      const YAML::Node v = it->second;  // a copy: the iterator's proxy dies with the step
      if (k == "median_ns") {
        saw_median = true;
        have_median = number(v, k, c.median_ns);
      } else if (k == "q1_ns") {
        number(v, k, c.q1_ns);
      } else if (k == "q3_ns") {
        number(v, k, c.q3_ns);
      } else if (k == "ci_low_ns") {
        number(v, k, c.ci_low_ns);
      } else if (k == "ci_high_ns") {
        number(v, k, c.ci_high_ns);
      } else if (k == "n") {
        double d = 0;
        if (number(v, k, d, true)) {
          if (d != std::floor(d) || d > 1e9)
            error(v.Mark(), fmt::format("n must be a whole number, got \"{}\"", v.Scalar()));
          else
            c.n = static_cast<int>(d), have_n = true;
        }
      } else if (k == "samples_ns") {
        numbers(v, k, "a sample", c.samples_ns);
      } else if (k == "run_medians_ns") {
        numbers(v, k, "a run median", c.run_medians_ns);
      } else if (k == "timing") {
        c.timing = scalar(v, k);
      } else if (trait(k, v, c.traits)) {
      } else {
        error(it->first.Mark(), fmt::format("unknown key \"{}\" in case \"{}\"", k, key));
      }
    }
    if (!have_median) {
      if (!saw_median) error(node.Mark(), fmt::format("case \"{}\" has no median_ns", key));
      return c;
    }
    if ((c.q1_ns > 0 && c.q1_ns > c.median_ns) || (c.q3_ns > 0 && c.q3_ns < c.median_ns))
      error(node.Mark(),
            fmt::format("case \"{}\": q1_ns <= median_ns <= q3_ns does not hold", key));
    if (c.ci_low_ns > 0 && c.ci_high_ns > 0 &&
        !(c.ci_low_ns <= c.median_ns && c.median_ns <= c.ci_high_ns))
      error(node.Mark(),
            fmt::format("case \"{}\": ci_low_ns <= median_ns <= ci_high_ns does not hold", key));
    if (!have_n) c.n = static_cast<int>(c.samples_ns.size());
    std::sort(c.samples_ns.begin(), c.samples_ns.end());
    return c;
  }

  Baseline parse(const YAML::Node& root) {
    Baseline b;
    b.path = m_path;
    if (!root.IsMap()) {
      m_diags.push_back({m_path, root.IsNull() ? 0 : root.Mark().line + 1,
                         root.IsNull() ? 0 : root.Mark().column + 1,
                         "a baseline is a mapping with \"hardware\" and \"cases\""});
      return b;
    }
    bool have_hardware = false, have_cases = false;
    for (auto it = root.begin(); it != root.end(); ++it) {
      const std::string k = it->first.Scalar();
      const YAML::Node v = it->second;  // a copy: the iterator's proxy dies with the step
      if (k == "hardware") {
        b.hardware = scalar(v, k);
        have_hardware = !b.hardware.empty();
      } else if (k == "fingerprint") {
        b.fingerprint = scalar(v, k);
      } else if (k == "commit") {
        b.commit = scalar(v, k);
      } else if (k == "cases") {
        have_cases = true;
        if (v.IsNull()) continue;  // an empty baseline
        if (!v.IsMap()) {
          error(v.Mark(), "\"cases\" must be a mapping from case key to its timings");
          continue;
        }
        for (auto c = v.begin(); c != v.end(); ++c) {
          const std::string key = c->first.Scalar();
          if (b.cases.count(key)) {
            error(c->first.Mark(),
                  fmt::format("duplicate case \"{}\" (first on line {})", key, b.cases[key].line));
            continue;
          }
          b.cases[key] = parse_case(key, c->second);
        }
      } else {
        error(it->first.Mark(),
              fmt::format("unknown key \"{}\" (expected hardware, fingerprint, commit, cases)", k));
      }
    }
    if (!have_hardware) error(root.Mark(), "missing \"hardware\"");
    if (!have_cases) error(root.Mark(), "missing \"cases\"");
    return b;
  }

 private:
  std::string m_path;
  std::vector<util::Diagnostic> m_diags;
};

// A list of numbers as YAML flow sequence, wrapped at 100 columns so diffs stay readable.
std::string number_list(const std::string& key, const std::vector<double>& values) {
  std::string out, line = "    " + key + ": [";
  const std::string indent(6, ' ');
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::string item =
        fmt::format("{}", std::llround(values[i])) + (i + 1 < values.size() ? "," : "]");
    if (line.size() + 1 + item.size() > 100) {
      out += line + "\n";
      line = indent + item;
    } else {
      line += (line.back() == '[' ? "" : " ") + item;
    }
  }
  return out + line + "\n";
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// What the case ran and how accurate it was: the errors to 6 significant digits (they are
// compared by factors of 4), kernel names quoted (GPU kernels hold ':', '<', ',').
std::string traits_yaml(const Traits& t) {
  std::string out;
  if (!t.backend.empty()) out += fmt::format("    backend: {}\n", quoted(t.backend));
  if (!t.reference.empty()) out += fmt::format("    reference: {}\n", quoted(t.reference));
  if (t.max_abs_error) out += fmt::format("    max_abs_error: {:.6g}\n", *t.max_abs_error);
  if (t.mean_abs_error) out += fmt::format("    mean_abs_error: {:.6g}\n", *t.mean_abs_error);
  if (t.compile_ms) out += fmt::format("    compile_ms: {:.6g}\n", *t.compile_ms);
  if (t.compile_graphs) out += fmt::format("    compile_graphs: {:.0f}\n", *t.compile_graphs);
  if (t.compile_graph_breaks)
    out += fmt::format("    compile_graph_breaks: {:.0f}\n", *t.compile_graph_breaks);
  if (t.joules_per_call) out += fmt::format("    joules_per_call: {:.6g}\n", *t.joules_per_call);
  if (t.kernels) {
    out += t.kernels->empty() ? "    kernels: []\n" : "    kernels:\n";
    for (const auto& k : *t.kernels) out += fmt::format("      - {}\n", quoted(k));
  }
  return out;
}

}  // namespace

Baseline parse_baseline(const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw util::InputError(util::Diagnostic{path, e.mark.line + 1, e.mark.column + 1, e.msg});
  }
  Parser p(path);
  Baseline b = p.parse(root);
  if (!p.diagnostics().empty()) throw util::InputError(p.diagnostics());
  return b;
}

Baseline load_baseline(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw util::InputError(
        util::Diagnostic{path, 0, 0, std::string("cannot read: ") + std::strerror(errno)});
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_baseline(ss.str(), path);
}

Baseline make_baseline(const core::Run& run, const BaselineOptions& options) {
  return make_baseline(std::vector<core::Run>{run}, options);
}

namespace {

// Whether a case of a run may go into a baseline: it completed, and it is stable unless the
// options keep unstable ones. Notes an unstable one in *notes_of, when given.
bool usable(const core::CaseResult& cr, const BaselineOptions& options, Baseline* notes_of) {
  if (cr.status != core::CaseStatus::ok) return false;
  if (options.include_unstable) return true;
  const core::Stability st = core::stability(cr);
  if (st.unstable && notes_of)
    notes_of->notes.emplace(cr.spec.key, st.note +
                                             "; left out of the baseline "
                                             "(--include-unstable keeps it)");
  return !st.unstable;
}

}  // namespace

Baseline make_baseline(const std::vector<core::Run>& runs, const BaselineOptions& options) {
  if (runs.empty()) return {};
  for (const auto& r : runs)
    if (r.env.fingerprint() != runs.front().env.fingerprint())
      throw util::InputError(util::Diagnostic{
          "--run", 0, 0,
          fmt::format("run {} is from environment {} but run {} from {}: a baseline's run-to-run "
                      "spread must come from one environment",
                      runs.front().id, runs.front().env.fingerprint(), r.id, r.env.fingerprint())});
  const core::Run& run = runs.front();
  Baseline b;
  b.hardware = options.hardware;
  if (b.hardware.empty()) {
    auto it = run.env.fields.find("device.name");
    b.hardware = it != run.env.fields.end() && !it->second.empty() ? it->second : "cpu";
  }
  b.fingerprint = run.env.fingerprint();
  b.commit = run.git_commit;
  for (const auto& cr : run.cases) {
    if (!usable(cr, options, &b)) continue;
    std::vector<double> kept = core::kept_ns(cr.samples);
    if (kept.empty()) continue;
    const core::Summary s = stats::summarize(kept);
    BaselineCase c;
    c.median_ns = s.median_ns;
    c.q1_ns = s.q1_ns;
    c.q3_ns = s.q3_ns;
    c.ci_low_ns = s.ci_low_ns;
    c.ci_high_ns = s.ci_high_ns;
    c.n = s.n;
    std::sort(kept.begin(), kept.end());
    const std::size_t k = std::max<std::size_t>(1, options.max_samples);
    if (kept.size() <= k) {
      c.samples_ns = std::move(kept);
    } else {
      // Evenly spaced quantiles keep the distribution's shape in a bounded file; treating them
      // as k samples (not n) makes later tests conservative, never optimistic.
      for (std::size_t i = 0; i < k; ++i)
        c.samples_ns.push_back(std::round(
            stats::quantile_sorted(kept, (static_cast<double>(i) + 0.5) / static_cast<double>(k))));
    }
    c.timing = timing_mode(cr);
    c.traits = traits_of(cr);
    b.cases[cr.spec.key] = std::move(c);
  }
  // Older runs: the cases the newest run lacks, then every run's median of each case.
  for (std::size_t i = 1; i < runs.size(); ++i) {
    Baseline older = make_baseline(runs[i], options);
    for (auto& [key, c] : older.cases) b.cases.emplace(key, std::move(c));
    for (auto& [key, note] : older.notes) b.notes.emplace(key, std::move(note));
  }
  for (const auto& [key, c] : b.cases) b.notes.erase(key);
  for (auto& [key, c] : b.cases) {
    for (auto r = runs.rbegin(); r != runs.rend(); ++r)
      for (const auto& cr : r->cases) {
        if (cr.spec.key != key || !usable(cr, options, nullptr)) continue;
        if (!c.timing.empty() && timing_mode(cr) != c.timing) continue;
        const std::vector<double> kept = core::kept_ns(cr.samples);
        if (!kept.empty()) c.run_medians_ns.push_back(stats::median(kept));
      }
    if (c.run_medians_ns.size() < 2) c.run_medians_ns.clear();  // one run: no spread
  }
  return b;
}

std::string to_yaml(const Baseline& b) {
  std::string out =
      "# attnprof baseline: per-case timings that `attnprof compare` gates against.\n"
      "# Written by `attnprof baseline update`; samples_ns are ascending, in nanoseconds.\n";
  out += fmt::format("hardware: {}\n", quoted(b.hardware));
  if (!b.fingerprint.empty()) out += fmt::format("fingerprint: {}\n", quoted(b.fingerprint));
  if (!b.commit.empty()) out += fmt::format("commit: {}\n", quoted(b.commit));
  if (b.cases.empty()) return out + "cases: {}\n";
  out += "cases:\n";
  auto num = [](double v) { return fmt::format("{}", std::llround(v)); };
  for (const auto& [key, c] : b.cases) {
    out += fmt::format("  {}:\n", quoted(key));
    out += fmt::format("    median_ns: {}\n", num(c.median_ns));
    if (c.q1_ns > 0) out += fmt::format("    q1_ns: {}\n", num(c.q1_ns));
    if (c.q3_ns > 0) out += fmt::format("    q3_ns: {}\n", num(c.q3_ns));
    if (c.ci_low_ns > 0) out += fmt::format("    ci_low_ns: {}\n", num(c.ci_low_ns));
    if (c.ci_high_ns > 0) out += fmt::format("    ci_high_ns: {}\n", num(c.ci_high_ns));
    out += fmt::format("    n: {}\n", c.n);
    if (!c.timing.empty()) out += fmt::format("    timing: {}\n", quoted(c.timing));
    out += traits_yaml(c.traits);
    if (!c.run_medians_ns.empty()) out += number_list("run_medians_ns", c.run_medians_ns);
    if (!c.samples_ns.empty()) out += number_list("samples_ns", c.samples_ns);
  }
  return out;
}

void write_baseline(const std::string& path, const Baseline& baseline) {
  // Every message names the user's path: the temporary file is ours, not theirs.
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec)
    throw util::EnvironmentError(
        fmt::format("{}: cannot create folder {}: {}", path, parent.string(), ec.message()));
  const std::string tmp = path + ".tmp";
  auto fail = [&](const std::string& what) {
    const std::string message = fmt::format("{}: {}", path, what);
    std::remove(tmp.c_str());
    throw util::EnvironmentError(message);
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(fmt::format("cannot write: {}", std::strerror(errno)));
    out << to_yaml(baseline);
    out.flush();
    if (!out) fail("write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    fail(fmt::format("cannot write: {}", std::strerror(errno)));
}

void write_baseline(const std::string& path, const core::Run& run, const BaselineOptions& options) {
  write_baseline(path, make_baseline(run, options));
}

}  // namespace attnprof::gate
