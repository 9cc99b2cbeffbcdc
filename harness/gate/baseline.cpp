#include "harness/gate/baseline.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

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
      const YAML::Node& v = it->second;
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
        if (!v.IsSequence()) {
          error(v.Mark(), "samples_ns must be a list of numbers");
          continue;
        }
        for (const auto& e : v) {
          double d = 0;
          if (number(e, "a sample", d)) c.samples_ns.push_back(d);
        }
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
      const YAML::Node& v = it->second;
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

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
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
  Baseline b;
  b.hardware = options.hardware;
  if (b.hardware.empty()) {
    auto it = run.env.fields.find("device.name");
    b.hardware = it != run.env.fields.end() && !it->second.empty() ? it->second : "cpu";
  }
  b.fingerprint = run.env.fingerprint();
  b.commit = run.git_commit;
  for (const auto& cr : run.cases) {
    if (cr.status != core::CaseStatus::ok) continue;
    std::vector<double> kept;
    for (const auto& s : cr.samples)
      if (!s.dropped) kept.push_back(static_cast<double>(s.ns));
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
    b.cases[cr.spec.key] = std::move(c);
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
    if (c.samples_ns.empty()) continue;
    // Wrapped at 100 columns so diffs of a refreshed baseline stay readable.
    std::string line = "    samples_ns: [";
    const std::string indent(6, ' ');
    for (std::size_t i = 0; i < c.samples_ns.size(); ++i) {
      std::string item = num(c.samples_ns[i]) + (i + 1 < c.samples_ns.size() ? "," : "]");
      if (line.size() + 1 + item.size() > 100) {
        out += line + "\n";
        line = indent + item;
      } else {
        line += (line.back() == '[' ? "" : " ") + item;
      }
    }
    out += line + "\n";
  }
  return out;
}

void write_baseline(const std::string& path, const Baseline& baseline) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw util::EnvironmentError(fmt::format("{}: cannot write: {}", tmp, std::strerror(errno)));
    out << to_yaml(baseline);
    out.flush();
    if (!out) throw util::EnvironmentError(fmt::format("{}: write failed", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw util::EnvironmentError(
        fmt::format("{}: cannot rename {} into place: {}", path, tmp, std::strerror(errno)));
}

void write_baseline(const std::string& path, const core::Run& run, const BaselineOptions& options) {
  write_baseline(path, make_baseline(run, options));
}

}  // namespace attnprof::gate
