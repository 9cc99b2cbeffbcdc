// store::case_history (case_history.h): the queries behind a case's history report.
#include "harness/store/case_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "harness/store/history.h"
#include "harness/util/error.h"
#include "harness/util/glob.h"

namespace attnprof::store {

CaseHistory case_history(Database& db, const std::string& key, const std::string& branch,
                         const std::string& env) {
  CaseHistory h;
  h.key = key;
  HistoryFilter f;
  f.case_glob = key;
  f.metric = "summary.*";
  f.branch = branch;
  f.env_fingerprint = env;
  std::vector<HistoryRow> rows = history(db, f);
  if (rows.empty())
    throw util::InputError(util::Diagnostic{
        "--case", 0, 0,
        fmt::format("no stored history for \"{}\"{}", key, branch.empty() ? "" : " on " + branch)});
  // One environment: the one asked for, else the newest run's (never mix machines).
  const auto newest = std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.started_ns < b.started_ns;
  });
  h.env_fingerprint = newest->env_fingerprint;
  std::map<std::pair<std::int64_t, std::string>, HistoryPoint> by_run;
  for (const auto& row : rows) {
    if (row.env_fingerprint != h.env_fingerprint) continue;
    HistoryPoint& p = by_run[{row.started_ns, row.run_id}];
    p.run_id = row.run_id, p.commit = row.git_commit, p.branch = row.git_branch;
    p.started_ns = row.started_ns;
    if (row.metric == "summary.median_ns") p.median_ns = row.value;
    if (row.metric == "summary.ci_low_ns") p.ci_low_ns = row.value;
    if (row.metric == "summary.ci_high_ns") p.ci_high_ns = row.value;
  }
  for (auto& [k, p] : by_run) h.points.push_back(p);
  f.metric = "summary.median_ns";
  f.env_fingerprint = h.env_fingerprint;
  for (auto& c : find_changes(db, f))
    if (c.case_key == key) h.changes.push_back(c);
  for (const auto& a : db.annotations())
    if (util::glob_match(a.case_glob, key)) h.annotations.push_back(a);
  return h;
}

}  // namespace attnprof::store
