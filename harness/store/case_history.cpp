// store::case_histories (case_history.h): the queries behind a case's history report.
#include "harness/store/case_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "harness/core/stability.h"
#include "harness/store/history.h"
#include "harness/util/error.h"
#include "harness/util/glob.h"

namespace attnprof::store {

namespace {

// "a, b, c and 47 more": the matches a refusal names.
std::string some_of(const std::map<std::string, CaseHistory>& by_key) {
  std::string out;
  std::size_t n = 0;
  for (const auto& [key, h] : by_key) {
    if (n++ == 10) break;
    out += (out.empty() ? "" : ", ") + key;
  }
  if (by_key.size() > 10) out += fmt::format(" and {} more", by_key.size() - 10);
  return out;
}

}  // namespace

std::vector<CaseHistory> case_histories(Database& db, const std::string& glob,
                                        const std::string& branch, const std::string& env) {
  HistoryFilter f;
  f.case_glob = glob;
  f.metric = "summary.*";
  f.branch = branch;
  f.env_fingerprint = env;
  std::vector<HistoryRow> rows = history(db, f);
  if (rows.empty())
    throw util::InputError(util::Diagnostic{"--case", 0, 0,
                                            fmt::format("no stored history for \"{}\"{}", glob,
                                                        branch.empty() ? "" : " on " + branch)});
  // One environment: the one asked for, else the newest run's (never mix machines).
  const auto newest = std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.started_ns < b.started_ns;
  });
  const std::string fingerprint = newest->env_fingerprint;
  std::map<std::string, CaseHistory> by_key;
  std::map<std::string, std::map<std::pair<std::int64_t, std::string>, HistoryPoint>> runs;
  for (const auto& row : rows) {
    if (row.env_fingerprint != fingerprint) continue;
    by_key[row.case_key].key = row.case_key;
    HistoryPoint& p = runs[row.case_key][{row.started_ns, row.run_id}];
    p.run_id = row.run_id, p.commit = row.git_commit, p.branch = row.git_branch;
    p.started_ns = row.started_ns;
    if (row.metric == "summary.median_ns") p.median_ns = row.value;
    if (row.metric == "summary.ci_low_ns") p.ci_low_ns = row.value;
    if (row.metric == "summary.ci_high_ns") p.ci_high_ns = row.value;
  }
  if (by_key.size() > kMaxHistoryCases)
    throw util::InputError(util::Diagnostic{
        "--case", 0, 0,
        fmt::format("\"{}\" matches {} cases, more than the {} one report draws: {}; give a "
                    "narrower glob",
                    glob, by_key.size(), kMaxHistoryCases, some_of(by_key))});
  f.env_fingerprint = fingerprint;
  // A busy machine's runs are drawn, and named: the figures core/stability.h judges them by.
  const std::pair<const char*, void (*)(core::StabilityFigures&, double)> figures[] = {
      {core::kDescheduledMetric, [](core::StabilityFigures& s, double v) { s.descheduled = v; }},
      {core::kDescheduledShiftMetric, [](core::StabilityFigures& s, double v) { s.shift = v; }},
      {core::kThrottledMetric, [](core::StabilityFigures& s, double v) { s.throttled = v; }},
      {core::kOtherProcessesMetric,
       [](core::StabilityFigures& s, double v) { s.other_processes = static_cast<int>(v); }}};
  for (const auto& [name, set] : figures) {
    f.metric = name;
    for (const auto& row : history(db, f))
      if (auto it = runs.find(row.case_key); it != runs.end())
        if (auto p = it->second.find({row.started_ns, row.run_id}); p != it->second.end())
          set(p->second.stability, row.value);
  }
  for (auto& [key, h] : by_key) {
    h.env_fingerprint = fingerprint;
    for (auto& [k, p] : runs[key]) h.points.push_back(p);
  }
  f.metric = "summary.median_ns";
  for (auto& c : find_changes(db, f))
    if (auto it = by_key.find(c.case_key); it != by_key.end()) it->second.changes.push_back(c);
  const std::vector<Annotation> notes = db.annotations();
  std::vector<CaseHistory> out;
  for (auto& [key, h] : by_key) {
    for (const auto& a : notes)
      if (util::glob_match(a.case_glob, key)) h.annotations.push_back(a);
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace attnprof::store
