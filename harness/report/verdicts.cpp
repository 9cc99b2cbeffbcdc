// The gate's verdicts rendered for people and CI (verdicts.h): console table, markdown,
// workflow annotations, JUnit XML and JSON, all from one GateReport.
#include "harness/report/verdicts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/report/findings.h"
#include "harness/util/format.h"

namespace attnprof::report {
namespace {

using gate::Verdict;

std::string change(const gate::CaseVerdict& v) {
  if (!std::isfinite(v.ratio) || v.ratio <= 0) return "";
  return fmt::format("{:+.2f}%", 100 * (v.ratio - 1));
}

// An unstable case's interval is marked: it spans samples of two machine states (gate/compare.h).
std::string interval(const gate::CaseVerdict& v) {
  if (!std::isfinite(v.ci_low) || !std::isfinite(v.ci_high) || v.ci_high <= 0) return "";
  return fmt::format("[{:+.2f}%, {:+.2f}%]{}", 100 * (v.ci_low - 1), 100 * (v.ci_high - 1),
                     v.unstable.empty() ? "" : " unstable");
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

// Worst first: by severity, then the larger change (either way) first, then by key, so the
// order does not depend on the run's case order.
std::vector<const gate::CaseVerdict*> worst_first(const std::vector<gate::CaseVerdict>& v) {
  std::vector<const gate::CaseVerdict*> sorted;
  for (const auto& c : v) sorted.push_back(&c);
  auto size = [](const gate::CaseVerdict* c) {
    return std::isfinite(c->ratio) && c->ratio > 0 ? std::abs(std::log(c->ratio)) : 0.0;
  };
  std::stable_sort(sorted.begin(), sorted.end(), [&](auto* a, auto* b) {
    if (severity(a->verdict) != severity(b->verdict))
      return severity(a->verdict) < severity(b->verdict);
    if (size(a) != size(b)) return size(a) > size(b);
    return a->key < b->key;
  });
  return sorted;
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

// "regression +20.00% (99% CI [+19.00%, +21.00%]): reason"
std::string one_line_verdict(const gate::CaseVerdict& c) {
  std::string msg = gate::to_string(c.verdict);
  if (!change(c).empty()) msg += " " + change(c);
  if (!interval(c).empty()) msg += " (99% CI " + interval(c) + ")";
  if (!c.reason.empty()) msg += ": " + one_line(c.reason, 0);
  return msg;
}

std::string short_commit(const std::string& c) {
  return c.empty() ? "unknown" : c.substr(0, 12);
}

std::string device_name(const core::Run& run) {
  auto it = run.env.fields.find("device.name");
  return it == run.env.fields.end() ? "?" : it->second;
}

std::string outcome(const GateReport& r) {
  switch (r.exit_code) {
    case 0:
      return "passed";
    case 1:
      return "failed";
    case 3:
      return "measure again";
    default:
      return fmt::format("exit {}", r.exit_code);
  }
}

// A verdict's findings (gate/findings.h) in its JSON object: "kernels" and "accuracy", each with
// "changed" null where one side did not record it, and "findings", the sentences.
void add_findings(nlohmann::json& v, const gate::Findings& f) {
  using nlohmann::json;
  auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(); };
  const gate::KernelChange& k = f.kernels;
  v["kernels"] = {{"changed", k.known ? json(k.changed) : json()},
                  {"removed", k.removed},
                  {"added", k.added},
                  {"base_backend", k.base_backend},
                  {"head_backend", k.head_backend}};
  const gate::AccuracyChange& a = f.accuracy;
  v["accuracy"] = {{"changed", a.known ? json(a.changed) : json()},
                   {"base_max_abs_error", a.known ? json(a.base_max) : json()},
                   {"head_max_abs_error", a.known ? json(a.head_max) : json()},
                   {"base_mean_abs_error", opt(a.base_mean)},
                   {"head_mean_abs_error", opt(a.head_mean)},
                   {"factor", a.known ? json(a.factor) : json()},
                   {"floor", a.known ? json(a.floor) : json()}};
  const gate::CompileChange& c = f.compile;
  v["compile"] = {{"changed", c.known ? json(c.changed) : json()},
                  {"base_ms", c.known ? json(c.base_ms) : json()},
                  {"head_ms", c.known ? json(c.head_ms) : json()},
                  {"base_graph_breaks", c.known ? json(c.base_breaks) : json()},
                  {"head_graph_breaks", c.known ? json(c.head_breaks) : json()},
                  {"factor", c.known ? json(c.factor) : json()}};
  v["findings"] = json::array();
  for (const auto& x : f.list)
    v["findings"].push_back({{"kind", x.kind}, {"text", x.text}, {"fails", x.fails}});
}

// An A/B's detail in the JSON report: each case's rounds, per-op diff and memory figures.
nlohmann::json ab_json(const AbDetail& ab) {
  using nlohmann::json;
  json cases = json::array();
  for (const auto& a : ab.cases) {
    json rounds = json::array(), ops = json::array();
    for (const auto& x : a.rounds) {
      json round = {{"base_ns", x.base_ns}, {"head_ns", x.head_ns}, {"head_first", x.head_first()}};
      if (x.base_q1_ns > 0 && x.head_q1_ns > 0) {
        round["base_q1_ns"] = x.base_q1_ns;
        round["head_q1_ns"] = x.head_q1_ns;
      }
      if (x.base_clock_mhz > 0) round["base_clock_mhz"] = x.base_clock_mhz;
      if (x.head_clock_mhz > 0) round["head_clock_mhz"] = x.head_clock_mhz;
      rounds.push_back(std::move(round));
    }
    for (const auto& o : a.ops)
      ops.push_back({{"name", o.name},
                     {"shapes", o.shapes},
                     {"kernel", o.kernel},
                     {"base_calls", o.base_calls},
                     {"head_calls", o.head_calls},
                     {"base_self_ns_per_call", o.base_self_ns},
                     {"head_self_ns_per_call", o.head_self_ns},
                     {"base_total_ns_per_call", o.base_total_ns},
                     {"head_total_ns_per_call", o.head_total_ns},
                     {"base_bytes", o.base_bytes},
                     {"head_bytes", o.head_bytes}});
    json memory = json::array();
    for (const auto& m : a.memory)
      memory.push_back(
          {{"metric", m.metric}, {"base", m.base}, {"head", m.head}, {"moved", m.moved}});
    cases.push_back({{"case", a.key}, {"rounds", rounds}, {"ops", ops}, {"memory", memory}});
  }
  return {{"base_label", ab.base_label},
          {"head_label", ab.head_label},
          {"same_build", ab.same_build ? json(*ab.same_build) : json()},
          {"cases", cases}};
}

Table op_diff_table(const std::vector<OpDiff>& ops, std::size_t rows, bool markdown) {
  const std::string q = markdown ? "`" : "";
  Table t({"op / kernel", "calls", "base self/call", "head self/call", "Δ total self"});
  t.set_key(0);
  t.set_drop_order({2, 3});
  for (std::size_t i = 0; i < ops.size() && i < rows; ++i) {
    const OpDiff& o = ops[i];
    t.add({(o.kernel ? "kernel " : "") + q + o.name + q + (o.shapes.empty() ? "" : " " + o.shapes),
           o.base_calls == o.head_calls ? std::to_string(o.head_calls)
                                        : fmt::format("{} → {}", o.base_calls, o.head_calls),
           duration_or_empty(o.base_self_ns), duration_or_empty(o.head_self_ns),
           util::format_duration(o.delta_ns())});
  }
  return t;
}

std::string op_diff_markdown(const std::vector<OpDiff>& ops, std::size_t rows) {
  return op_diff_table(ops, rows, true).render_markdown(200);
}

}  // namespace

std::string op_diff_console(const std::vector<OpDiff>& ops, std::size_t rows, std::size_t width) {
  return ops.empty() ? "" : op_diff_table(ops, rows, false).render(width);
}

std::vector<OpDiff> diff_cost(const std::vector<core::CostRow>& base,
                              const std::vector<core::CostRow>& head) {
  const bool device =
      std::any_of(base.begin(), base.end(), [](const auto& r) { return r.device_self_ns > 0; }) ||
      std::any_of(head.begin(), head.end(), [](const auto& r) { return r.device_self_ns > 0; });
  std::map<std::pair<std::string, std::string>, OpDiff> by_key;  // (kernel? "k" : shapes, name)
  auto per_call = [](double ns, int calls) { return calls > 0 ? ns / calls : 0.0; };
  auto add = [&](const std::vector<core::CostRow>& rows, bool is_head) {
    for (const auto& r : rows) {
      OpDiff& d = by_key[{r.input_shapes, r.op}];
      d.name = r.op;
      d.shapes = r.input_shapes;
      const double self = device ? r.device_self_ns : r.cpu_self_ns;
      const double total = device ? r.device_total_ns : r.cpu_total_ns;
      (is_head ? d.head_calls : d.base_calls) += r.calls;
      (is_head ? d.head_self_ns : d.base_self_ns) += self;  // summed now, per call below
      (is_head ? d.head_total_ns : d.base_total_ns) += total;
      (is_head ? d.head_bytes : d.base_bytes) += r.bytes_allocated;
      for (std::size_t k = 0; k < r.kernels.size(); ++k) {
        OpDiff& kd = by_key[{"\x01kernel", r.kernels[k].first}];
        kd.name = r.kernels[k].first;
        kd.kernel = true;
        const double ns = k < r.kernel_ns.size() ? r.kernel_ns[k] : 0;
        (is_head ? kd.head_calls : kd.base_calls) += r.kernels[k].second;
        (is_head ? kd.head_self_ns : kd.base_self_ns) += ns;
        (is_head ? kd.head_total_ns : kd.base_total_ns) += ns;
      }
    }
  };
  add(base, false);
  add(head, true);
  std::vector<OpDiff> out;
  for (auto& [key, d] : by_key) {
    d.base_self_ns = per_call(d.base_self_ns, d.base_calls);
    d.head_self_ns = per_call(d.head_self_ns, d.head_calls);
    d.base_total_ns = per_call(d.base_total_ns, d.base_calls);
    d.head_total_ns = per_call(d.head_total_ns, d.head_calls);
    out.push_back(d);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const OpDiff& a, const OpDiff& b) { return a.delta_ns() > b.delta_ns(); });
  return out;
}

std::vector<std::string> report_notes(const GateReport& r) {
  std::vector<std::string> notes;
  if (r.ab && r.ab->same_build.value_or(false)) notes.push_back(kSameBuildNote);
  notes.insert(notes.end(), r.notes.begin(), r.notes.end());
  return notes;
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
  if (const std::string findings = finding_counts(v); !findings.empty()) out += "; " + findings;
  return out;
}

std::string console_report(const GateReport& r, std::size_t width) {
  Table t({"case", "verdict", "baseline", "now", "change", "99% CI", "tol", "reason"});
  t.set_key(0);
  t.set_detail(7);
  t.set_drop_order({6, 2, 3, 5});  // tol, baseline, now, 99% CI: the verdict and change stay
  for (const auto& c : r.verdicts)
    t.add({c.key, gate::to_string(c.verdict), duration_or_empty(c.baseline_median_ns),
           duration_or_empty(c.candidate_median_ns), change(c), interval(c),
           c.tolerance > 0 ? fmt::format("{:.1f}%", 100 * c.tolerance) : "", c.reason});
  std::string out = fmt::format("baseline: {}\n", r.baseline);
  out += t.render(width);
  out += findings_console(r.verdicts);
  if (r.ab) out += memory_console(*r.ab, width);
  // The sentences under the table fit its width too (wrapped after spaces and commas); the notes
  // stay whole lines, since gate scripts look for them word for word (kSameBuildNote).
  std::vector<std::string> lines{verdict_counts(r.verdicts)};
  if (r.mode == "ab") lines.insert(lines.begin(), kPairedNote);
  for (const auto& text : lines)
    for (const auto& part : width > 0 ? wrap(text, width) : std::vector{text}) out += part + "\n";
  for (const auto& note : report_notes(r)) out += note + "\n";
  return out;
}

std::string markdown_report(const GateReport& r, std::size_t limit) {
  std::vector<const gate::CaseVerdict*> notable, unchanged;
  for (auto* c : worst_first(r.verdicts))
    (c->verdict == Verdict::unchanged ? unchanged : notable).push_back(c);

  std::string head = fmt::format("## attnprof gate: {}\n\n", outcome(r));
  head += verdict_counts(r.verdicts) + "\n\n";
  for (const auto& note : report_notes(r)) head += "> " + one_line(note, 0) + "\n\n";
  head += fmt::format("Run `{}` at commit `{}` on `{}` (environment `{}`), against `{}`.\n\n",
                      r.run.id, short_commit(r.run.git_commit), device_name(r.run),
                      r.run.env.fingerprint(), r.baseline);

  // Rows are added while they fit: a cut table would break the markdown after it.
  const std::vector<std::string> header{"case",   "verdict", "baseline", "now",
                                        "change", "99% CI",  "reason"};
  auto row = [](const gate::CaseVerdict* c) {
    Table t({"", "", "", "", "", "", ""});
    t.add({"`" + c->key + "`", gate::to_string(c->verdict),
           duration_or_empty(c->baseline_median_ns), duration_or_empty(c->candidate_median_ns),
           change(*c), interval(*c), c->reason});
    const std::string md = t.render_markdown(util::kDetailCap);  // a whole reason, as the console
    return md.substr(md.find("---|\n") + 5);  // the row alone, without the empty header
  };
  auto table_header = [&] {
    Table t(header);
    return t.render_markdown();
  };
  const std::string tail_note = "\n… {} more case(s) not shown here: see the JSON report.\n";
  const std::size_t reserve = tail_note.size() + 16;
  std::string md = head;
  std::size_t left_out = 0;
  auto fits = [&](const std::string& more) { return md.size() + more.size() + reserve < limit; };

  if (r.mode == "ab") md += std::string(kPairedNote) + "\n\n";
  if (!notable.empty()) {
    md += table_header();
    for (auto* c : notable) {
      const std::string line = row(c);
      if (left_out == 0 && fits(line))
        md += line;
      else
        ++left_out;
    }
    md += "\n";
  }
  if (const std::string findings = findings_markdown(r.verdicts); fits(findings)) md += findings;
  if (r.ab) {
    for (auto* c : notable) {
      if (c->verdict != Verdict::regression && c->verdict != Verdict::improvement) continue;
      auto it = std::find_if(r.ab->cases.begin(), r.ab->cases.end(),
                             [&](const AbCase& a) { return a.key == c->key; });
      if (it == r.ab->cases.end() || it->ops.empty()) continue;
      const std::string block = fmt::format(
          "<details><summary>What moved in <code>{}</code> ({})</summary>\n\n{}\n"
          "</details>\n\n",
          c->key, change(*c), op_diff_markdown(it->ops, 10));
      if (fits(block)) md += block;
    }
  }
  if (r.ab)
    if (const std::string memory = memory_markdown(*r.ab); fits(memory)) md += memory;
  if (!unchanged.empty()) {
    std::string block = fmt::format("<details><summary>{} unchanged case(s)</summary>\n\n{}",
                                    unchanged.size(), table_header());
    const std::string end = "\n</details>\n";
    std::size_t shown = 0;
    for (auto* c : unchanged) {
      const std::string line = row(c);
      if (left_out == 0 && fits(block + line + end)) {
        block += line;
        ++shown;
      } else {
        ++left_out;
      }
    }
    if (shown > 0) md += block + end;
  }
  if (left_out > 0) md += fmt::format(fmt::runtime(tail_note), left_out);
  return md;
}

std::string annotations(const GateReport& r) {
  std::string out;
  for (const auto& c : r.verdicts) {
    const char* level = nullptr;
    if (c.verdict == Verdict::regression || c.verdict == Verdict::failed ||
        c.verdict == Verdict::missing)
      level = "error";
    else if (c.verdict == Verdict::inconclusive)
      level = "warning";
    if (level)
      out += fmt::format("::{} title=attnprof {}::{}\n", level, escape_annotation(c.key, true),
                         escape_annotation(one_line_verdict(c)));
    for (const auto& f : c.findings.list)
      out += fmt::format("::{} title=attnprof {}::{}\n", f.fails ? "error" : "warning",
                         escape_annotation(c.key, true), escape_annotation(finding_text(f)));
  }
  if (r.validity && r.validity->environmental)
    out += fmt::format("::warning title=attnprof environmental run::{}\n",
                       escape_annotation(r.validity->reason));
  return out;
}

std::string junit_report(const GateReport& r) {
  int failures = 0, skipped = 0;
  std::string cases;
  for (const auto& c : r.verdicts) {
    // "suite/workload/shape/kernel": the first two parts group, the rest names.
    std::string classname = "attnprof", name = c.key;
    const auto first = c.key.find('/');
    const auto second = first == std::string::npos ? first : c.key.find('/', first + 1);
    if (second != std::string::npos) {
      classname = c.key.substr(0, first) + "." + c.key.substr(first + 1, second - first - 1);
      name = c.key.substr(second + 1);
    }
    cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.9f}\"",
                         xml_escape(classname), xml_escape(name), c.candidate_median_ns / 1e9);
    const bool by_verdict = gate::fails_gate(c.verdict, r.strict, true);
    const bool fails = by_verdict || c.findings.fails();
    std::string text = one_line_verdict(c);
    for (const auto& f : c.findings.list) text += "; " + finding_text(f);
    const std::string message = xml_escape(text);
    if (fails) {
      ++failures;
      const auto failing = std::find_if(c.findings.list.begin(), c.findings.list.end(),
                                        [](const gate::Finding& f) { return f.fails; });
      cases +=
          fmt::format(">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                      by_verdict ? gate::to_string(c.verdict) : failing->kind, message, message);
      cases += "    </testcase>\n";
    } else if (c.verdict == Verdict::inconclusive || c.verdict == Verdict::ignored) {
      ++skipped;
      cases += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", message);
    } else {
      cases += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", message);
    }
  }
  const int tests = static_cast<int>(r.verdicts.size());
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"attnprof\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"{2}\">\n"
      "  <testsuite name=\"attnprof {3}\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"{2}\">\n",
      tests, failures, skipped, xml_escape(r.mode));
  out += "    <properties>\n";
  for (const auto& [k, v] :
       std::vector<std::pair<std::string, std::string>>{{"run", r.run.id},
                                                        {"commit", r.run.git_commit},
                                                        {"baseline", r.baseline},
                                                        {"environment", r.run.env.fingerprint()},
                                                        {"device", device_name(r.run)}})
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", k, xml_escape(v));
  for (const auto& note : report_notes(r))
    out += fmt::format("      <property name=\"note\" value=\"{}\"/>\n", xml_escape(note));
  out += "    </properties>\n";
  out += cases;
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string json_report(const GateReport& r) {
  using nlohmann::json;
  auto num = [](double x) { return std::isfinite(x) ? json(x) : json(); };
  auto run_json = [](const core::Run& run) {
    return json{{"id", run.id},
                {"commit", run.git_commit},
                {"branch", run.git_branch},
                {"environment", run.env.fingerprint()},
                {"device", device_name(run)}};
  };
  std::map<std::string, int> counts;
  for (const char* k : {"regression", "improvement", "unchanged", "inconclusive", "new", "missing",
                        "failed", "accepted", "ignored"})
    counts[k] = 0;
  for (const auto& c : r.verdicts) ++counts[gate::to_string(c.verdict)];
  std::map<std::string, int> findings{
      {"kernels changed", 0}, {"compile changed", 0}, {"accuracy changed", 0}};
  for (const auto& c : r.verdicts)
    for (const auto& f : c.findings.list) ++findings[f.kind];
  json j;
  j["result"]["findings"] = findings;
  j["schema"] = "attnprof-gate";
  j["schema_version"] = kJsonSchemaVersion;
  j["mode"] = r.mode;
  j["result"]["exit_code"] = r.exit_code;
  j["result"]["passed"] = r.exit_code == 0;
  j["result"]["counts"] = counts;
  j["run"] = run_json(r.run);
  j["baseline"] = r.baseline;
  j["notes"] = report_notes(r);
  if (r.validity)
    j["validity"] = {{"environmental", r.validity->environmental},
                     {"compared", r.validity->compared},
                     {"slower", r.validity->slower},
                     {"faster", r.validity->faster},
                     {"reason", r.validity->reason}};
  j["verdicts"] = json::array();
  for (const auto& c : r.verdicts)
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
                             {"unstable", c.unstable},
                             {"reference", c.reference},
                             {"not_checked", c.reference == "none" ? core::kNotChecked : ""},
                             {"reason", c.reason}});
  for (std::size_t i = 0; i < r.verdicts.size(); ++i)
    add_findings(j["verdicts"][i], r.verdicts[i].findings);

  if (r.ab) {
    j["ab"] = ab_json(*r.ab);
    j["ab"]["base_run"] = run_json(r.ab->base);
  }
  return j.dump(2) + "\n";
}

}  // namespace attnprof::report
