#include "harness/gate/history_baseline.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "harness/gate/annotations.h"
#include "harness/gate/timing_mode.h"
#include "harness/stats/quantile.h"
#include "harness/store/history.h"
#include "harness/util/error.h"

namespace attnprof::gate {
namespace {

struct Point {
  std::int64_t started_ns = 0;
  std::string run_id, commit, case_key;
  double median_ns = 0;
};

// The timer's metrics of earlier runs, by (case key, run id): what timing_mode() needs. Queried
// only when the judged run has a GPU case (CPU cases are always timed by the wall clock).
using TimerMetrics = std::map<std::pair<std::string, std::string>, std::map<std::string, double>>;
TimerMetrics timer_metrics(store::Database& db, store::HistoryFilter f) {
  TimerMetrics out;
  for (const char* metric : {"measure.graph_batch", "measure.cupti_fraction"}) {
    f.metric = metric;
    for (auto& row : store::history(db, f)) out[{row.case_key, row.run_id}][metric] = row.value;
  }
  return out;
}

// Where a reset or accept annotation starts a new segment, if it does for this branch and
// environment: the start of the run it names (an accept only for a run of the baseline branch
// in this environment; a PR's accepted run says nothing about main), else its creation time.
std::optional<std::int64_t> segment_start(store::Database& db, const store::Annotation& a,
                                          const std::string& branch, const std::string& fp) {
  if (a.kind == store::AnnotationKind::ignore) return std::nullopt;
  if (!a.git_branch.empty() && a.git_branch != branch) return std::nullopt;
  if (!a.env_fingerprint.empty() && fp.rfind(a.env_fingerprint, 0) != 0) return std::nullopt;
  if (a.run_id.empty()) return a.created_ns;
  std::optional<store::RunInfo> run = db.find_run(a.run_id);
  if (a.kind == store::AnnotationKind::reset) return run ? run->started_ns : a.created_ns;
  if (run && run->git_branch == branch && run->env_fingerprint == fp) return run->started_ns;
  return std::nullopt;
}

}  // namespace

std::string describe(const HistoryOptions& o, const std::string& fingerprint) {
  return fmt::format("history of {} (newest {} runs, min {}, environment {})", o.branch, o.window,
                     o.min_runs, fingerprint);
}

Baseline history_baseline(store::Database& db, const core::Run& judged, const HistoryOptions& o) {
  if (o.min_runs < 2)
    throw util::InputError(util::Diagnostic{
        "--min-runs", 0, 0,
        fmt::format("must be at least 2 (a spread needs two runs), got {}", o.min_runs)});
  if (o.window < o.min_runs)
    throw util::InputError(util::Diagnostic{
        "--window", 0, 0,
        fmt::format("must be at least --min-runs ({}), got {}", o.min_runs, o.window)});
  if (o.branch.empty())
    throw util::InputError(util::Diagnostic{"--baseline-branch", 0, 0, "must not be empty"});

  const std::string fp = judged.env.fingerprint();
  Baseline b;
  b.fingerprint = fp;
  b.history = true;
  b.path = describe(o, fp);
  auto device = judged.env.fields.find("device.name");
  b.hardware = device != judged.env.fields.end() ? device->second : "";

  struct Boundary {
    const store::Annotation* a;
    std::int64_t start;
  };
  const std::vector<store::Annotation> notes = db.annotations();
  std::vector<Boundary> boundaries;
  std::vector<const store::Annotation*> run_ignores;
  for (const auto& a : notes) {
    if (a.kind == store::AnnotationKind::ignore && !a.run_id.empty()) run_ignores.push_back(&a);
    if (auto start = segment_start(db, a, o.branch, fp)) boundaries.push_back({&a, *start});
  }

  store::HistoryFilter f;
  f.metric = store::default_metric;  // summary.median_ns: the median of the run's kept samples
  f.branch = o.branch;
  f.env_fingerprint = fp;
  if (judged.started_ns > 0) f.until_ns = judged.started_ns;
  // Newest first per case, the segment cut keeps a suffix, so `window` rows suffice for it;
  // each run-scoped ignore or the judged run itself may take one row out of the middle.
  f.last = o.window + static_cast<int>(run_ignores.size()) + 1;
  for (const auto& cr : judged.cases) {  // only the judged cases: history reads them one by one
    f.case_keys.push_back(cr.spec.key);
    f.case_keys.insert(f.case_keys.end(), cr.spec.aliases.begin(), cr.spec.aliases.end());
  }
  std::map<std::string, std::vector<Point>> series;
  for (auto& row : store::history(db, f)) {
    if (row.run_id == judged.id || row.value <= 0) continue;
    if (judged.started_ns > 0 && row.started_ns >= judged.started_ns) continue;
    series[row.case_key].push_back(
        {row.started_ns, row.run_id, row.git_commit, row.case_key, row.value});
  }
  bool gpu = false;
  for (const auto& cr : judged.cases) gpu = gpu || timing_mode(cr) != "cpu.wall";
  const TimerMetrics timers = gpu ? timer_metrics(db, f) : TimerMetrics{};

  std::int64_t newest = 0;
  for (const auto& cr : judged.cases) {
    std::vector<std::string> keys{cr.spec.key};
    keys.insert(keys.end(), cr.spec.aliases.begin(), cr.spec.aliases.end());
    std::vector<Point> points;
    for (const auto& k : keys)
      if (auto it = series.find(k); it != series.end())
        points.insert(points.end(), it->second.begin(), it->second.end());
    std::stable_sort(points.begin(), points.end(),
                     [](const Point& x, const Point& y) { return x.started_ns < y.started_ns; });

    const Boundary* cut = nullptr;
    for (const auto& bd : boundaries) {
      bool match = false;
      for (const auto& k : keys) match = match || glob_match(bd.a->case_glob, k);
      if (match && (!cut || bd.start > cut->start)) cut = &bd;
    }
    const std::string mode = timing_mode(cr);
    std::vector<Point> kept;
    int retimed = 0;
    std::string other_mode;
    for (const auto& p : points) {
      if (cut && p.started_ns < cut->start) continue;
      if (auto t = timers.find({p.case_key, p.run_id}); !mode.empty() && t != timers.end()) {
        const std::string earlier = timing_mode(cr.spec.hardware.device, t->second);
        if (!earlier.empty() && earlier != mode) {
          ++retimed;
          other_mode = earlier;
          continue;
        }
      }
      bool ignored = false;
      for (const auto* a : run_ignores)
        for (const auto& k : keys)
          ignored = ignored || (a->run_id == p.run_id && glob_match(a->case_glob, k));
      if (!ignored) kept.push_back(p);
    }
    if (kept.size() > static_cast<std::size_t>(o.window))
      kept.erase(kept.begin(), kept.end() - o.window);

    const std::string retimed_note =
        retimed ? fmt::format("{} earlier run(s) timed as {} ({}) left out; this run is {}",
                              retimed, other_mode, describe_timing_mode(other_mode), mode)
                : "";
    if (kept.size() < static_cast<std::size_t>(o.min_runs)) {
      std::string since =
          cut ? fmt::format(" since annotation #{} ({} by {}: {})", cut->a->id,
                            store::to_string(cut->a->kind), cut->a->author, cut->a->reason)
              : "";
      b.notes[cr.spec.key] = fmt::format(
          "{} earlier run(s) of this case on {} in this environment{}; {} needed{}", kept.size(),
          o.branch, since, o.min_runs, retimed_note.empty() ? "" : " (" + retimed_note + ")");
      continue;
    }
    BaselineCase c;
    c.remark = retimed_note;
    c.timing = mode;
    for (const auto& p : kept) c.run_medians_ns.push_back(p.median_ns);
    std::vector<double> sorted = stats::sorted_copy(c.run_medians_ns);
    c.median_ns = stats::median_sorted(sorted);
    c.q1_ns = stats::quantile_sorted(sorted, 0.25);
    c.q3_ns = stats::quantile_sorted(sorted, 0.75);
    c.n = static_cast<int>(kept.size());
    if (kept.back().started_ns >= newest) {
      newest = kept.back().started_ns;
      b.commit = kept.back().commit;
    }
    b.cases[cr.spec.key] = std::move(c);
  }
  return b;
}

}  // namespace attnprof::gate
