// Human decisions applied to verdicts, and Perf-Accept commit trailers read as accept
// annotations (annotations.h).
#include "harness/gate/annotations.h"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <sstream>

#include "harness/util/error.h"
#include "harness/util/glob.h"

namespace attnprof::gate {

bool applies(const store::Annotation& a, const std::vector<std::string>& case_keys,
             const std::string& run_id, const std::string& branch, const std::string& fingerprint) {
  if (!a.run_id.empty() && a.run_id != run_id) return false;
  if (!a.git_branch.empty() && a.git_branch != branch) return false;
  if (!a.env_fingerprint.empty() && fingerprint.rfind(a.env_fingerprint, 0) != 0) return false;
  for (const auto& k : case_keys)
    if (glob_match(a.case_glob, k)) return true;
  return false;
}

namespace {

std::string who(const store::Annotation& a) {
  return a.id > 0 ? fmt::format("{} (#{})", a.author, a.id) : a.author;
}

}  // namespace

int apply_annotations(std::vector<CaseVerdict>& verdicts, const core::Run& run,
                      const std::vector<store::Annotation>& annotations) {
  // Aliases of each run case, so an annotation written under a case's old name still holds.
  std::map<std::string, const core::Case*> specs;
  for (const auto& cr : run.cases) specs[cr.spec.key] = &cr.spec;
  const std::string fp = run.env.fingerprint();
  int changed = 0;
  for (auto& v : verdicts) {
    std::vector<std::string> keys{v.key};
    if (!v.baseline_key.empty() && v.baseline_key != v.key) keys.push_back(v.baseline_key);
    if (auto it = specs.find(v.key); it != specs.end())
      keys.insert(keys.end(), it->second->aliases.begin(), it->second->aliases.end());
    const store::Annotation *accept = nullptr, *ignore = nullptr;
    for (const auto& a : annotations) {  // oldest first: the last match is the newest
      if (!applies(a, keys, run.id, run.git_branch, fp)) continue;
      if (a.kind == store::AnnotationKind::accept) accept = &a;
      if (a.kind == store::AnnotationKind::ignore) ignore = &a;
    }
    const std::string was = fmt::format("was {}: {}", to_string(v.verdict), v.reason);
    // A finding that would fail the gate is covered like a regression: it stays in the reports,
    // saying who accepted it.
    for (auto& f : v.findings.list) {
      const store::Annotation* by = ignore ? ignore : accept;
      if (!f.fails || !by) continue;
      f.fails = false;
      f.text +=
          fmt::format(" ({} by {}: {})", ignore ? "ignored" : "accepted", who(*by), by->reason);
      changed += !ignore;
    }
    if (ignore) {
      v.verdict = Verdict::ignored;
      v.reason = fmt::format("ignored by {}: {}; {}", who(*ignore), ignore->reason, was);
      ++changed;
    } else if (accept && (v.verdict == Verdict::regression || v.verdict == Verdict::missing)) {
      v.verdict = Verdict::accepted;
      v.reason = fmt::format("accepted by {}: {}; {}", who(*accept), accept->reason, was);
      ++changed;
    }
  }
  return changed;
}

std::vector<store::Annotation> parse_accept_trailers(const std::string& message,
                                                     const std::string& run_id,
                                                     const std::string& author) {
  static const std::string key = "perf-accept:";
  std::vector<store::Annotation> out;
  std::vector<util::Diagnostic> errors;
  std::istringstream in(message);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.size() < key.size()) continue;
    bool match = true;
    for (std::size_t i = 0; i < key.size() && match; ++i)
      match = std::tolower(static_cast<unsigned char>(line[i])) == key[i];
    if (!match) continue;
    std::istringstream rest(line.substr(key.size()));
    store::Annotation a;
    a.kind = store::AnnotationKind::accept;
    rest >> a.case_glob;
    std::getline(rest, a.reason);
    auto first = a.reason.find_first_not_of(" \t");
    auto last = a.reason.find_last_not_of(" \t\r");
    a.reason = first == std::string::npos ? "" : a.reason.substr(first, last - first + 1);
    if (a.case_glob.empty() || a.reason.empty()) {
      errors.push_back({"commit message", n, 1,
                        "Perf-Accept needs a case glob and a reason: \"Perf-Accept: <glob> "
                        "<reason>\""});
      continue;
    }
    if (const auto bad = util::glob_problem(a.case_glob)) {
      const std::size_t at = line.find(a.case_glob, key.size());
      errors.push_back({"commit message", n, static_cast<int>(at + bad->at),
                        "Perf-Accept: " + util::describe(a.case_glob, *bad)});
      continue;
    }
    a.run_id = run_id;
    a.author = author;
    out.push_back(std::move(a));
  }
  if (!errors.empty()) throw util::InputError(errors);
  return out;
}

}  // namespace attnprof::gate
