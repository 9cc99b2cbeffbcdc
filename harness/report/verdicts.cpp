#include "harness/report/verdicts.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/report/format.h"
#include "harness/util/format.h"

namespace attnprof::report {
namespace {

using gate::Verdict;

std::string change(const gate::CaseVerdict& v) {
  if (!std::isfinite(v.ratio) || v.ratio <= 0) return "";
  return fmt::format("{:+.2f}%", 100 * (v.ratio - 1));
}

std::string interval(const gate::CaseVerdict& v) {
  if (!std::isfinite(v.ci_low) || !std::isfinite(v.ci_high) || v.ci_high <= 0) return "";
  return fmt::format("[{:+.2f}%, {:+.2f}%]", 100 * (v.ci_low - 1), 100 * (v.ci_high - 1));
}

std::string duration_or_empty(double ns) {
  return ns > 0 ? util::format_duration(ns) : "";
}

int severity(Verdict v) {
  switch (v) {
    case Verdict::regression:
      return 0;
    case Verdict::failed:
      return 1;
    case Verdict::missing:
      return 2;
    case Verdict::inconclusive:
      return 3;
    case Verdict::accepted:
      return 4;
    case Verdict::improvement:
      return 5;
    case Verdict::new_case:
      return 6;
    case Verdict::ignored:
      return 7;
    case Verdict::unchanged:
      return 8;
  }
  return 9;
}

// Annotation text must not break the "::cmd prop=value::message" syntax (GitHub's escaping
// rules): the message escapes %, CR and LF; a property value also ':' and ',' (plugin case keys
// such as ".../op:ns::attn" would otherwise end the title early).
std::string escape_annotation(const std::string& s, bool property = false) {
  std::string o;
  for (char c : s) {
    if (c == '%')
      o += "%25";
    else if (c == '\r')
      o += "%0D";
    else if (c == '\n')
      o += "%0A";
    else if (property && c == ':')
      o += "%3A";
    else if (property && c == ',')
      o += "%2C";
    else
      o += c;
  }
  return o;
}

}  // namespace

std::string verdict_table(const std::vector<gate::CaseVerdict>& v) {
  Table t({"case", "verdict", "baseline", "now", "change", "99% CI", "tol", "reason"});
  for (const auto& c : v)
    t.add({c.key, gate::to_string(c.verdict), duration_or_empty(c.baseline_median_ns),
           duration_or_empty(c.candidate_median_ns), change(c), interval(c),
           c.tolerance > 0 ? fmt::format("{:.1f}%", 100 * c.tolerance) : "", c.reason});
  return t.render();
}

std::string verdict_counts(const std::vector<gate::CaseVerdict>& v) {
  std::map<Verdict, int> n;
  for (const auto& c : v) ++n[c.verdict];
  std::string out = fmt::format(
      "gate: {} regression, {} failed, {} missing, {} inconclusive, {} improvement, {} new, {} "
      "unchanged",
      n[Verdict::regression], n[Verdict::failed], n[Verdict::missing], n[Verdict::inconclusive],
      n[Verdict::improvement], n[Verdict::new_case], n[Verdict::unchanged]);
  if (n[Verdict::accepted] || n[Verdict::ignored])
    out += fmt::format(", {} accepted, {} ignored", n[Verdict::accepted], n[Verdict::ignored]);
  return out;
}

std::string verdict_markdown(const std::vector<gate::CaseVerdict>& v, const core::Run& run,
                             const std::string& baseline_path,
                             const std::vector<std::string>& notes) {
  std::vector<const gate::CaseVerdict*> sorted;
  for (const auto& c : v) sorted.push_back(&c);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto* a, auto* b) { return severity(a->verdict) < severity(b->verdict); });
  auto row_table = [](const std::vector<const gate::CaseVerdict*>& rows) {
    Table t({"case", "verdict", "baseline", "now", "change", "99% CI", "reason"});
    for (auto* c : rows)
      t.add({"`" + c->key + "`", gate::to_string(c->verdict),
             duration_or_empty(c->baseline_median_ns), duration_or_empty(c->candidate_median_ns),
             change(*c), interval(*c), c->reason});
    return t.render_markdown();
  };
  std::vector<const gate::CaseVerdict*> notable, unchanged;
  for (auto* c : sorted) (c->verdict == Verdict::unchanged ? unchanged : notable).push_back(c);

  std::string md = "## attnprof gate\n\n";
  md += verdict_counts(v) + "\n\n";
  for (const auto& note : notes) md += "> " + note + "\n\n";
  md += fmt::format("Run `{}` at commit `{}` on `{}` (environment `{}`), against `{}`.\n\n", run.id,
                    run.git_commit.empty() ? "unknown" : run.git_commit.substr(0, 12),
                    run.env.fields.count("device.name") ? run.env.fields.at("device.name") : "?",
                    run.env.fingerprint(), baseline_path);
  if (!notable.empty()) md += row_table(notable) + "\n";
  if (!unchanged.empty())
    md += fmt::format("<details><summary>{} unchanged case(s)</summary>\n\n{}\n</details>\n",
                      unchanged.size(), row_table(unchanged));
  // GitHub rejects job summaries over 1 MiB; stay well under it.
  constexpr size_t limit = 60000;
  if (md.size() > limit) md = md.substr(0, limit) + "\n\n… (truncated: see the JSON report)\n";
  return md;
}

std::string verdict_annotations(const std::vector<gate::CaseVerdict>& v) {
  std::string out;
  for (const auto& c : v) {
    const char* level = nullptr;
    if (c.verdict == Verdict::regression || c.verdict == Verdict::failed ||
        c.verdict == Verdict::missing)
      level = "error";
    else if (c.verdict == Verdict::inconclusive)
      level = "warning";
    if (!level) continue;
    std::string msg = fmt::format("{} {}", gate::to_string(c.verdict), change(c));
    if (!interval(c).empty()) msg += " (99% CI " + interval(c) + ")";
    if (!c.reason.empty()) msg += ": " + c.reason;
    out += fmt::format("::{} title=attnprof {}::{}\n", level, escape_annotation(c.key, true),
                       escape_annotation(msg));
  }
  return out;
}

std::string verdict_json(const std::vector<gate::CaseVerdict>& v, const core::Run& run) {
  nlohmann::json j;
  j["run"] = {{"id", run.id},
              {"commit", run.git_commit},
              {"branch", run.git_branch},
              {"environment", run.env.fingerprint()}};
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); };
  for (const auto& c : v)
    j["verdicts"].push_back({{"case", c.key},
                             {"baseline_case", c.baseline_key},
                             {"verdict", gate::to_string(c.verdict)},
                             {"ratio", num(c.ratio)},
                             {"ci_low", num(c.ci_low)},
                             {"ci_high", num(c.ci_high)},
                             {"p_value", num(c.p_value)},
                             {"p_adjusted", num(c.p_adjusted)},
                             {"tolerance", c.tolerance},
                             {"method", c.method},
                             {"baseline_median_ns", c.baseline_median_ns},
                             {"candidate_median_ns", c.candidate_median_ns},
                             {"baseline_n", c.baseline_n},
                             {"candidate_n", c.candidate_n},
                             {"reason", c.reason}});
  return j.dump(2) + "\n";
}

}  // namespace attnprof::report
