// A baseline from the stored history (history_baseline.h): each judged case's earlier runs,
// cut to its segment and window, minus ignored and differently timed runs.
#include "harness/gate/history_baseline.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "harness/core/stability.h"
#include "harness/core/metric_names.h"
#include "harness/gate/annotations.h"
#include "harness/gate/clock_policy.h"
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
  for (const char* metric :
       {"measure.graph_batch", "measure.cupti_fraction", core::kApplicationsClockMetric,
        core::kDefaultApplicationsClockMetric, core::kPersistenceMetric}) {
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

// A boundary that starts a new segment: the annotation, and where its segment starts.
struct Boundary {
  store::Annotation a;
  std::int64_t start;
};

// What every judged case's baseline is cut from: the earlier runs of its branch and
// environment, by case key, and the annotations and timer metrics that leave some of them out.
struct History {
  std::vector<Boundary> boundaries;            // resets and accepts for this branch and fp
  std::vector<store::Annotation> run_ignores;  // ignores naming a run
  std::map<std::string, std::vector<Point>> series;
  TimerMetrics timers;
  // (case, run): what the worker stored of a busy machine (core/stability.h)
  std::map<std::pair<std::string, std::string>, core::StabilityFigures> stability;
};

void check(const HistoryOptions& o) {
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
}

void read_annotations(store::Database& db, const HistoryOptions& o, const std::string& fp,
                      History& h) {
  for (auto& a : db.annotations()) {
    if (a.kind == store::AnnotationKind::ignore && !a.run_id.empty()) h.run_ignores.push_back(a);
    if (auto start = segment_start(db, a, o.branch, fp)) h.boundaries.push_back({a, *start});
  }
}

std::vector<std::string> keys_of(const core::Case& spec) {
  std::vector<std::string> keys{spec.key};
  keys.insert(keys.end(), spec.aliases.begin(), spec.aliases.end());
  return keys;
}

store::HistoryFilter history_filter(const core::Run& judged, const HistoryOptions& o,
                                    const std::string& fp, std::size_t run_ignores) {
  store::HistoryFilter f;
  f.metric = store::default_metric;  // summary.median_ns: the median of the run's kept samples
  f.branch = o.branch;
  f.env_fingerprint = fp;
  if (judged.started_ns > 0) f.until_ns = judged.started_ns;
  // Newest first per case, the segment cut keeps a suffix, so `window` rows suffice for it;
  // each run-scoped ignore or the judged run itself may take one row out of the middle.
  f.last = o.window + static_cast<int>(run_ignores) + 1;
  for (const auto& cr : judged.cases) {  // only the judged cases: history reads them one by one
    const std::vector<std::string> keys = keys_of(cr.spec);
    f.case_keys.insert(f.case_keys.end(), keys.begin(), keys.end());
  }
  return f;
}

History read_history(store::Database& db, const core::Run& judged, const HistoryOptions& o,
                     const std::string& fp) {
  History h;
  read_annotations(db, o, fp, h);
  const store::HistoryFilter f = history_filter(judged, o, fp, h.run_ignores.size());
  for (auto& row : store::history(db, f)) {
    if (row.run_id == judged.id || row.value <= 0) continue;
    if (judged.started_ns > 0 && row.started_ns >= judged.started_ns) continue;
    h.series[row.case_key].push_back(
        {row.started_ns, row.run_id, row.git_commit, row.case_key, row.value});
  }
  bool gpu = false;
  for (const auto& cr : judged.cases) gpu = gpu || timing_mode(cr) != "cpu.wall";
  if (gpu) h.timers = timer_metrics(db, f);
  if (!o.include_unstable) h.stability = store::stability_figures(db, f, gpu);
  return h;
}

// The series of a case's key and of its aliases, joined, oldest first.
std::vector<Point> points_of(const History& h, const std::vector<std::string>& keys) {
  std::vector<Point> points;
  for (const auto& k : keys)
    if (auto it = h.series.find(k); it != h.series.end())
      points.insert(points.end(), it->second.begin(), it->second.end());
  std::stable_sort(points.begin(), points.end(),
                   [](const Point& x, const Point& y) { return x.started_ns < y.started_ns; });
  return points;
}

// The newest boundary whose case glob matches one of the keys, or null.
const Boundary* newest_boundary(const History& h, const std::vector<std::string>& keys) {
  const Boundary* cut = nullptr;
  for (const auto& bd : h.boundaries) {
    bool match = false;
    for (const auto& k : keys) match = match || glob_match(bd.a.case_glob, k);
    if (match && (!cut || bd.start > cut->start)) cut = &bd;
  }
  return cut;
}

bool ignored(const History& h, const std::string& run_id, const std::vector<std::string>& keys) {
  bool out = false;
  for (const auto& a : h.run_ignores)
    for (const auto& k : keys) out = out || (a.run_id == run_id && glob_match(a.case_glob, k));
  return out;
}

// One judged case's earlier runs that its baseline is made of, and what was left out why.
struct CaseRuns {
  std::vector<Point> kept;        // oldest first, at most `window`
  const Boundary* cut = nullptr;  // where the case's segment starts, if a boundary matched
  std::string mode;               // the judged case's timing mode
  int retimed = 0;                // earlier runs left out for being timed in another mode
  std::string other_mode;         // the last such mode
  std::string policy;             // the judged case's GPU clock policy (clock_policy.h)
  int reclocked = 0;              // earlier runs left out for another clock policy
  std::string other_policy;       // the last such policy
  int unstable = 0;               // earlier runs left out for being unstable
};

bool was_unstable(const History& h, const Point& p, const core::Case& spec) {
  auto it = h.stability.find({p.case_key, p.run_id});
  return it != h.stability.end() && core::unstable(it->second, spec.measure);
}

CaseRuns case_runs(const History& h, const core::CaseResult& cr, int window) {
  const std::vector<std::string> keys = keys_of(cr.spec);
  CaseRuns c;
  c.cut = newest_boundary(h, keys);
  c.mode = timing_mode(cr);
  c.policy = clock_policy(cr.metrics);
  for (const auto& p : points_of(h, keys)) {
    if (c.cut && p.started_ns < c.cut->start) continue;
    if (auto t = h.timers.find({p.case_key, p.run_id}); !c.mode.empty() && t != h.timers.end()) {
      const std::string earlier = timing_mode(cr.spec.hardware.device, t->second);
      if (!earlier.empty() && earlier != c.mode) {
        ++c.retimed;
        c.other_mode = earlier;
        continue;
      }
      const std::string clocks = clock_policy(t->second);
      if (!c.policy.empty() && !clocks.empty() && clocks != c.policy) {
        ++c.reclocked;
        c.other_policy = clocks;
        continue;
      }
    }
    if (was_unstable(h, p, cr.spec)) {
      ++c.unstable;
      continue;
    }
    if (!ignored(h, p.run_id, keys)) c.kept.push_back(p);
  }
  if (c.kept.size() > static_cast<std::size_t>(window))
    c.kept.erase(c.kept.begin(), c.kept.end() - window);
  return c;
}

// What was left out of the case's runs, and why: "" when nothing was.
std::string left_out_note(const CaseRuns& c) {
  std::string out;
  if (c.retimed)
    out = fmt::format("{} earlier run(s) timed as {} ({}) left out; this run is {}", c.retimed,
                      c.other_mode, describe_timing_mode(c.other_mode), c.mode);
  if (c.reclocked)
    out += fmt::format("{}{} earlier run(s) under other GPU clocks ({}) left out; this run's: {}",
                       out.empty() ? "" : "; ", c.reclocked, c.other_policy, c.policy);
  if (c.unstable)
    out += fmt::format(
        "{}{} earlier unstable run(s) left out (a busy machine; "
        "--include-unstable keeps them)",
        out.empty() ? "" : "; ", c.unstable);
  return out;
}

// Why a case with fewer than `min_runs` earlier runs has no baseline (its verdict is `new`).
std::string too_few_note(const CaseRuns& c, const HistoryOptions& o) {
  const std::string since =
      c.cut ? fmt::format(" since annotation #{} ({} by {}: {})", c.cut->a.id,
                          store::to_string(c.cut->a.kind), c.cut->a.author, c.cut->a.reason)
            : "";
  const std::string left_out = left_out_note(c);
  return fmt::format("{} earlier run(s) of this case on {} in this environment{}; {} needed{}",
                     c.kept.size(), o.branch, since, o.min_runs,
                     left_out.empty() ? "" : " (" + left_out + ")");
}

BaselineCase baseline_case(const CaseRuns& h) {
  BaselineCase c;
  c.remark = left_out_note(h);
  c.timing = h.mode;
  for (const auto& p : h.kept) c.run_medians_ns.push_back(p.median_ns);
  std::vector<double> sorted = stats::sorted_copy(c.run_medians_ns);
  c.median_ns = stats::median_sorted(sorted);
  c.q1_ns = stats::quantile_sorted(sorted, 0.25);
  c.q3_ns = stats::quantile_sorted(sorted, 0.75);
  c.n = static_cast<int>(h.kept.size());
  return c;
}

}  // namespace

std::string describe(const HistoryOptions& o, const std::string& fingerprint) {
  return fmt::format("history of {} (newest {} runs, min {}, environment {})", o.branch, o.window,
                     o.min_runs, fingerprint);
}

Baseline history_baseline(store::Database& db, const core::Run& judged, const HistoryOptions& o) {
  check(o);
  const std::string fp = judged.env.fingerprint();
  Baseline b;
  b.fingerprint = fp;
  b.history = true;
  b.path = describe(o, fp);
  auto device = judged.env.fields.find("device.name");
  b.hardware = device != judged.env.fields.end() ? device->second : "";

  const History h = read_history(db, judged, o, fp);
  std::int64_t newest = 0;
  for (const auto& cr : judged.cases) {
    const CaseRuns c = case_runs(h, cr, o.window);
    if (c.kept.size() < static_cast<std::size_t>(o.min_runs)) {
      b.notes[cr.spec.key] = too_few_note(c, o);
      continue;
    }
    if (c.kept.back().started_ns >= newest) {
      newest = c.kept.back().started_ns;
      b.commit = c.kept.back().commit;
    }
    b.cases[cr.spec.key] = baseline_case(c);
    // What the newest of its runs ran and how accurate it was: the state of the branch.
    if (auto newest_case = db.load_case(c.kept.back().run_id, c.kept.back().case_key))
      b.cases[cr.spec.key].traits = traits_of(*newest_case);
  }
  return b;
}

}  // namespace attnprof::gate
