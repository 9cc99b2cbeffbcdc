// Change points in the stored history, per case, metric and environment, each with the commit
// range it happened in (changes.h).
#include "harness/store/changes.h"

#include <map>
#include <set>
#include <tuple>

namespace attnprof::store {

std::vector<CaseChange> find_changes(Database& db, const HistoryFilter& filter,
                                     const stats::ChangePointSettings& settings,
                                     UnstableRuns* unstable) {
  const bool keep = unstable && unstable->include;
  const auto figures = keep ? decltype(stability_figures(db, filter)){}
                            : stability_figures(db, filter);
  const core::MeasureSettings defaults;
  std::set<std::pair<std::string, std::string>> left_out;  // (case key, run id)
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<HistoryRow>> series;
  for (auto& row : history(db, filter)) {
    if (const auto f = figures.find({row.case_key, row.run_id});
        f != figures.end() && core::unstable(f->second, defaults)) {
      left_out.insert(f->first);
      continue;
    }
    series[{row.case_key, row.metric, row.env_fingerprint}].push_back(std::move(row));
  }
  std::vector<CaseChange> out;
  for (const auto& [key, rows] : series) {
    std::vector<double> values;
    values.reserve(rows.size());
    for (const auto& r : rows) values.push_back(r.value);
    for (const auto& cp : stats::detect_change_points(values, settings)) {
      const HistoryRow& before = rows[cp.index - 1];
      const HistoryRow& after = rows[cp.index];
      CaseChange c;
      std::tie(c.case_key, c.metric, c.env_fingerprint) = key;
      c.git_branch = after.git_branch;
      c.point = cp;
      c.commit_before = before.git_commit;
      c.commit_after = after.git_commit;
      c.run_before = before.run_id;
      c.run_after = after.run_id;
      c.at_ns = after.started_ns;
      c.series_length = static_cast<int>(rows.size());
      out.push_back(std::move(c));
    }
  }
  if (unstable) unstable->left_out = static_cast<int>(left_out.size());
  return out;
}

BisectableSlowdown newest_bisectable_slowdown(const std::vector<CaseChange>& changes) {
  const auto across_commits = [](const CaseChange& c) {
    return !c.commit_before.empty() && !c.commit_after.empty() && c.commit_before != c.commit_after;
  };
  BisectableSlowdown out;
  for (const auto& c : changes)
    if (c.point.relative_change > 0 && across_commits(c) &&
        (!out.change || c.at_ns > out.change->at_ns))
      out.change = &c;
  for (const auto& c : changes)
    if (c.point.relative_change > 0 && !across_commits(c) &&
        (!out.change || c.at_ns > out.change->at_ns))
      ++out.passed_over;
  return out;
}

}  // namespace attnprof::store
