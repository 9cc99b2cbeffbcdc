// gate::history_baseline on a stored history: branch, environment, window, segments,
// ignores and timing modes, and the verdicts it leads to.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "harness/core/metric_names.h"
#include "harness/core/stability.h"
#include "harness/gate/compare.h"
#include "harness/gate/history_baseline.h"
#include "harness/stats/quantile.h"
#include "harness/stats/rng.h"
#include "harness/stats/summary.h"
#include "harness/util/error.h"
#include "store_fixtures.h"

using namespace attnprof;
using testing::TempDir;

namespace {

const std::string kA = "bert/prefill/b1-s128-fp32-none/eager";
const std::string kB = "bert/prefill/b1-s256-fp32-none/eager";
constexpr std::int64_t kHour = 3600'000'000'000;

// Samples around `median` with a relative spread of `sigma` (lognormal, seeded).
core::CaseResult result(const std::string& key, double median, std::uint64_t seed, int n = 50,
                        double sigma = 0.005) {
  stats::Rng rng(seed);
  core::CaseResult cr;
  cr.spec.key = key;
  std::vector<double> kept;
  for (int i = 0; i < n; ++i) {
    double v = std::round(median * std::exp(sigma * rng.normal()));
    cr.samples.push_back({static_cast<std::int64_t>(v), 0, std::nullopt, false});
    kept.push_back(v);
  }
  cr.summary = stats::summarize(kept);
  return cr;
}

// Run `i` (started i hours in) of case kA (and kB at twice the time), median `median`.
core::Run run(int i, double median, const std::string& branch = "main",
              const std::string& cpu = "Test CPU") {
  core::Run r;
  r.id = fmt::format("run-{:02}-{}-{}", i, branch, cpu.size());
  r.git_commit = fmt::format("c{:02}", i);
  r.git_branch = branch;
  r.started_ns = i * kHour;
  r.ended_ns = r.started_ns + 1000;
  r.env = testing::cpu_env(cpu);
  r.cases.push_back(result(kA, median, 100 + i));
  r.cases.push_back(result(kB, 2 * median, 200 + i));
  return r;
}

// The medians history would store for kA in runs first..last (1% apart, to tell them apart).
std::vector<double> medians_of(store::Database& db, int first, int last) {
  std::vector<double> out;
  for (int i = first; i <= last; ++i) {
    auto r = db.load_run(fmt::format("run-{:02}-main-8", i));
    REQUIRE(r);
    out.push_back(r->cases[0].summary.median_ns);
  }
  return out;
}

struct History {
  TempDir dir;
  store::Database db = store::Database::open(dir.file("h.db"));
  // Main runs 1..n in the test environment, case medians 100 us * (1 + i%)
  explicit History(int n) {
    for (int i = 1; i <= n; ++i) db.write_run(run(i, 1e5 * (1 + 0.01 * i)));
  }
  store::Annotation note(store::AnnotationKind kind, const std::string& glob,
                         const std::string& run_id = "", std::int64_t created_ns = 0) {
    store::Annotation a;
    a.kind = kind;
    a.case_glob = glob;
    a.run_id = run_id;
    a.author = "bob";
    a.reason = "new kernel";
    a.created_ns = created_ns;
    a.id = db.add_annotation(a);
    return a;
  }
};

}  // namespace

TEST_SUITE("gate::history_baseline") {
  TEST_CASE("main-branch runs of the same environment before the judged run, oldest first") {
    History h(8);
    h.db.write_run(run(3, 5e5, "feature"));            // a PR's run: not a baseline
    h.db.write_run(run(4, 5e5, "main", "Other CPU"));  // another machine: never compared
    h.db.write_run(run(20, 5e5));                      // after the judged run
    core::Run judged = run(10, 1e5, "feature");
    h.db.write_run(judged);
    gate::Baseline b = gate::history_baseline(h.db, judged);
    REQUIRE(b.cases.count(kA) == 1);
    const auto& c = b.cases.at(kA);
    CHECK(c.run_medians_ns == medians_of(h.db, 1, 8));
    CHECK(c.n == 8);
    CHECK(c.median_ns == doctest::Approx(stats::median(c.run_medians_ns)));
    CHECK(c.samples_ns.empty());
    CHECK(b.cases.at(kB).run_medians_ns.size() == 8);
    CHECK(b.fingerprint == judged.env.fingerprint());
    CHECK(b.commit == "c08");
    CHECK(b.notes.empty());
    CHECK(b.path == fmt::format("history of main (newest 30 runs, min 5, environment {})",
                                judged.env.fingerprint()));
  }
  TEST_CASE("the newest `window` runs; fewer than min_runs leave the case out, saying why") {
    History h(12);
    core::Run judged = run(13, 1e5, "feature");
    gate::HistoryOptions o;
    o.window = 5;
    CHECK(gate::history_baseline(h.db, judged, o).cases.at(kA).run_medians_ns ==
          medians_of(h.db, 8, 12));
    o.window = 30;
    o.min_runs = 13;
    gate::Baseline b = gate::history_baseline(h.db, judged, o);
    CHECK(b.cases.empty());
    CHECK(b.notes.at(kA) ==
          "12 earlier run(s) of this case on main in this environment; 13 "
          "needed");
    // compare() says so in the `new` verdict.
    auto v = gate::compare(b, judged);
    REQUIRE(v.size() == 2);
    CHECK(v[0].verdict == gate::Verdict::new_case);
    CHECK(v[0].reason == "not in the baseline: " + b.notes.at(kA));
    CHECK(gate::exit_code(v) == util::exit_pass);
  }
  TEST_CASE("what the newest kept run ran and its error are the baseline's; a change is found") {
    TempDir dir;
    store::Database db = store::Database::open(dir.file("h.db"));
    for (int i = 1; i <= 6; ++i) {
      core::Run r = run(i, 1e5);
      r.cases[0].kernels = std::vector<std::string>{i < 6 ? "aten::old" : "aten::flash"};
      r.cases[0].reference = "sdpa.math";
      r.cases[0].max_abs_error = 1e-7 * i;
      r.cases[0].metrics["accuracy.mean_abs_error"] = 1e-8;
      db.write_run(r);
    }
    core::Run judged = run(7, 1e5, "feature");
    judged.cases[0].kernels = std::vector<std::string>{"aten::math"};
    judged.cases[0].reference = "sdpa.math";
    judged.cases[0].max_abs_error = 4e-5;
    const gate::Baseline b = gate::history_baseline(db, judged);
    const gate::Traits& t = b.cases.at(kA).traits;
    CHECK(t.kernels == std::vector<std::string>{"aten::flash"});
    CHECK(t.max_abs_error == 6e-7);
    CHECK(t.mean_abs_error == 1e-8);
    CHECK_FALSE(b.cases.at(kB).traits.kernels.has_value());  // never recorded: unknown
    const auto v = gate::compare(b, judged);
    REQUIRE(v.at(0).findings.list.size() == 2);
    CHECK(v[0].findings.list[0].text == "kernels changed: aten::flash -> aten::math");
    CHECK(v[0].findings.list[1].kind == "accuracy changed");
    CHECK(v.at(1).findings.list.empty());
  }

  TEST_CASE("a reset starts the history anew, for the cases its glob matches") {
    History h(10);
    core::Run judged = run(11, 1e5, "feature");
    auto reset = h.note(store::AnnotationKind::reset, "*s128*", "run-06-main-8");
    gate::Baseline b = gate::history_baseline(h.db, judged);
    CHECK(b.cases.at(kA).run_medians_ns == medians_of(h.db, 6, 10));  // from the named run on
    CHECK(b.cases.at(kB).n == 10);                                    // not matched
    // A later reset without a run: from its creation time, so nothing is left for kA.
    h.note(store::AnnotationKind::reset, kA, "", 9 * kHour + 1);
    b = gate::history_baseline(h.db, judged);
    CHECK(b.cases.count(kA) == 0);
    CHECK(b.notes.at(kA) ==
          "1 earlier run(s) of this case on main in this environment since "
          "annotation #2 (reset by bob: new kernel); 5 needed");
    // A reset without a run cuts at its creation time; one scoped to another branch does not
    // apply to main's history, however new.
    History h2(10);
    h2.note(store::AnnotationKind::reset, "*", "", 5 * kHour);
    store::Annotation scoped;
    scoped.kind = store::AnnotationKind::reset;
    scoped.case_glob = "*";
    scoped.git_branch = "release";
    scoped.author = "bob";
    scoped.reason = "r";
    scoped.created_ns = 8 * kHour;
    h2.db.add_annotation(scoped);
    CHECK(gate::history_baseline(h2.db, judged).cases.at(kA).run_medians_ns ==
          medians_of(h2.db, 5, 10));
    (void)reset;
  }
  TEST_CASE("an accepted main run starts a new segment; an accepted PR run does not") {
    History h(10);
    h.db.write_run(run(7, 1e5, "feature"));
    core::Run judged = run(11, 1e5, "feature");
    h.note(store::AnnotationKind::accept, "*", "run-07-feature-8");
    CHECK(gate::history_baseline(h.db, judged).cases.at(kA).n == 10);
    h.note(store::AnnotationKind::accept, kA, "run-05-main-8");
    gate::Baseline b = gate::history_baseline(h.db, judged);
    CHECK(b.cases.at(kA).run_medians_ns == medians_of(h.db, 5, 10));
    CHECK(b.cases.at(kB).n == 10);
  }
  TEST_CASE("a case ignored in one run leaves that run out of the case's history") {
    History h(8);
    core::Run judged = run(9, 1e5, "feature");
    h.note(store::AnnotationKind::ignore, kA, "run-04-main-8");
    h.note(store::AnnotationKind::ignore, kB, "");  // no run: gating only, history unchanged
    gate::Baseline b = gate::history_baseline(h.db, judged);
    auto want = medians_of(h.db, 1, 8);
    want.erase(want.begin() + 3);
    CHECK(b.cases.at(kA).run_medians_ns == want);
    CHECK(b.cases.at(kB).n == 8);
  }
  TEST_CASE("a renamed case keeps its history through its aliases") {
    History h(6);
    core::Run judged = run(7, 1e5, "feature");
    judged.cases[0].spec.key = "bert/prefill/s128/eager";
    judged.cases[0].spec.aliases = {kA};
    gate::Baseline b = gate::history_baseline(h.db, judged);
    CHECK(b.cases.at("bert/prefill/s128/eager").run_medians_ns == medians_of(h.db, 1, 6));
  }
  TEST_CASE("options out of range name the option") {
    History h(1);
    gate::HistoryOptions o;
    o.window = 3;
    try {
      gate::history_baseline(h.db, run(2, 1e5), o);
      FAIL("expected an InputError");
    } catch (const util::InputError& e) {
      CHECK(e.diagnostics()[0].to_string() == "--window: must be at least --min-runs (5), got 3");
    }
    o.min_runs = 1;
    CHECK_THROWS_AS(gate::history_baseline(h.db, run(2, 1e5), o), util::InputError);
  }
}

// The point of run medians: run-to-run drift of about 1% must not read as a regression, and a
// real one must still be caught.
TEST_SUITE("gate::history_baseline") {
  TEST_CASE("compare against history: drift is tolerated, a 10% slowdown is a regression") {
    TempDir dir;
    store::Database db = store::Database::open(dir.file("h.db"));
    stats::Rng drift(7);
    for (int i = 1; i <= 30; ++i) db.write_run(run(i, 1e5 * std::exp(0.01 * drift.normal())));
    gate::Options o;
    o.tolerance = 0.03;

    // A/A: twenty more runs of the same process. None may fail the gate.
    int regressions = 0;
    for (int j = 0; j < 20; ++j) {
      core::Run aa = run(31, 1e5 * std::exp(0.01 * drift.normal()), "feature");
      aa.id = fmt::format("aa-{}", j);
      for (auto& cr : aa.cases) cr = result(cr.spec.key, cr.summary.median_ns, 1000 + j);
      auto v = gate::compare(gate::history_baseline(db, aa), aa, o);
      REQUIRE(v.size() == 2);
      CHECK(v[0].method == "history");
      CHECK(v[0].baseline_n == 30);
      regressions += v[0].verdict == gate::Verdict::regression;
      regressions += v[1].verdict == gate::Verdict::regression;
    }
    CHECK(regressions == 0);

    // One run 4% slower than the history's center: beyond the 3% tolerance, but within what
    // runs do on their own. Against the samples of one earlier run that happened to be fast,
    // it would be a regression: within-run samples cannot show run-to-run drift.
    core::Run near = run(31, 1e5 * 1.04, "feature");
    auto v = gate::compare(gate::history_baseline(db, near), near, o);
    CHECK(v[0].verdict != gate::Verdict::regression);
    CHECK(v[0].ci_low < 1.03);
    std::optional<core::Run> fast;
    for (const auto& info : db.list_runs())
      if (auto r = db.load_run(info.id); r->cases[0].summary.median_ns < 0.995e5) fast = r;
    REQUIRE(fast);
    CHECK(gate::compare(gate::make_baseline(*fast), near, o)[0].verdict ==
          gate::Verdict::regression);

    core::Run slow = run(31, 1.10e5, "feature");
    v = gate::compare(gate::history_baseline(db, slow), slow, o);
    CHECK(v[0].verdict == gate::Verdict::regression);
    CHECK(v[0].ci_low > 1.03);
    CHECK(v[0].reason.find("history of 30 runs, n=50") != std::string::npos);
    CHECK(gate::exit_code(v, o) == util::exit_gate_failed);
  }
}

TEST_SUITE("gate::history_baseline timing modes") {
  // kA on a GPU, timed in CUDA-graph batches (graph_batch > 0) or as single cold calls.
  core::Run gpu_run(int i, double median, double graph_batch) {
    core::Run r = run(i, median);
    r.cases.resize(1);
    r.cases[0].spec.hardware.device = "cuda";
    r.cases[0].metrics = {{"measure.graph_batch", graph_batch}, {"measure.cupti_fraction", 1}};
    return r;
  }
  TEST_CASE("earlier runs timed differently are left out, and the reason says so") {
    TempDir dir;
    store::Database db = store::Database::open(dir.file("h.db"));
    // Six runs in graph batches at 100 us, two cold runs at 130 us (the L2 refill).
    for (int i = 1; i <= 8; ++i) db.write_run(gpu_run(i, i <= 6 ? 1e5 : 1.3e5, i <= 6 ? 16 : 0));
    core::Run judged = gpu_run(9, 1e5, 16);
    gate::Baseline b = gate::history_baseline(db, judged);
    REQUIRE(b.cases.count(kA));
    CHECK(b.cases[kA].n == 6);
    CHECK(b.cases[kA].timing == "cuda.graph.cupti");
    auto v = gate::compare(b, judged);
    INFO(v[0].reason);
    CHECK(v[0].verdict == gate::Verdict::unchanged);
    const std::string tail =
        "; 2 earlier run(s) timed as cuda.cold.cupti (single cold calls, CUPTI kernel time) left "
        "out; this run is cuda.graph.cupti";
    CHECK(v[0].reason.size() > tail.size());
    CHECK(v[0].reason.substr(v[0].reason.size() - tail.size()) == tail);
    // Judged cold, only the two cold runs remain: too few, and the note says why.
    core::Run cold = gpu_run(9, 1.3e5, 0);
    gate::Baseline c = gate::history_baseline(db, cold);
    CHECK(c.cases.count(kA) == 0);
    CHECK(c.notes.at(kA) ==
          "2 earlier run(s) of this case on main in this environment; 5 needed (6 earlier run(s) "
          "timed as cuda.graph.cupti (CUDA-graph batches, CUPTI kernel time) left out; this run "
          "is cuda.cold.cupti)");
  }

  TEST_CASE("earlier runs under another GPU clock policy are left out: a note, not a regression") {
    TempDir dir;
    store::Database db = store::Database::open(dir.file("h.db"));
    // Six runs at default clocks at 100 us; then someone set the applications clock to 1,410 of
    // 1,980 MHz (nvidia-smi -ac), and the kernel takes 140 us: the clocks', not the code's.
    auto clocked = [&](int i, double median, double app_mhz) {
      core::Run r = gpu_run(i, median, 16);
      r.cases[0].metrics[core::kApplicationsClockMetric] = app_mhz;
      r.cases[0].metrics[core::kDefaultApplicationsClockMetric] = 1980;
      r.cases[0].metrics[core::kPersistenceMetric] = 1;
      return r;
    };
    for (int i = 1; i <= 6; ++i) db.write_run(clocked(i, 1e5, 1980));
    core::Run judged = clocked(7, 1.4e5, 1410);
    gate::Baseline b = gate::history_baseline(db, judged);
    CHECK(b.cases.count(kA) == 0);
    CHECK(b.notes.at(kA) ==
          "0 earlier run(s) of this case on main in this environment; 5 needed (6 earlier run(s) "
          "under other GPU clocks (default clocks, persistence on) left out; this run's: "
          "applications clock 1,410 of 1,980 MHz, persistence on)");
    auto v = gate::compare(b, judged);
    CHECK(v[0].verdict == gate::Verdict::new_case);
    // The same slowdown under the same clocks is the regression it is.
    core::Run same = clocked(7, 1.4e5, 1980);
    CHECK(gate::compare(gate::history_baseline(db, same), same)[0].verdict ==
          gate::Verdict::regression);
  }

  TEST_CASE("earlier GPU runs that ran throttled or shared their GPU are left out") {
    TempDir dir;
    store::Database db = store::Database::open(dir.file("h.db"));
    for (int i = 1; i <= 8; ++i) {
      core::Run r = gpu_run(i, i <= 6 ? 1e5 : 1.4e5, 16);
      if (i == 7) r.cases[0].metrics[core::kThrottledMetric] = 0.38;
      if (i == 8) r.cases[0].metrics[core::kOtherProcessesMetric] = 1;
      db.write_run(r);
    }
    core::Run judged = gpu_run(9, 1e5, 16);
    gate::Baseline b = gate::history_baseline(db, judged);
    REQUIRE(b.cases.count(kA));
    CHECK(b.cases[kA].n == 6);
    CHECK(b.cases[kA].remark ==
          "2 earlier unstable run(s) left out (a busy machine; --include-unstable keeps them)");
  }

  TEST_CASE("earlier runs whose case was unstable are left out unless asked, and the note says") {
    History h(8);
    // Two more main runs at 150 us whose kA was descheduled in 30% of its samples, which moved
    // its median (by 4 half-widths of its interval; the first stored before the move was
    // recorded, judged by its share).
    for (int i = 9; i <= 10; ++i) {
      core::Run busy = run(i, 1.5e5);
      busy.cases[0].metrics[core::kDescheduledMetric] = 0.3;
      if (i == 10) busy.cases[0].metrics[core::kDescheduledShiftMetric] = 4;
      // kB stable: kept. 30% of it descheduled too, but its median did not move.
      busy.cases[1].metrics[core::kDescheduledMetric] = 0.3;
      busy.cases[1].metrics[core::kDescheduledShiftMetric] = 0.5;
      h.db.write_run(busy);
    }
    core::Run judged = run(12, 1e5, "feature");
    gate::Baseline b = gate::history_baseline(h.db, judged);
    CHECK(b.cases.at(kA).run_medians_ns == medians_of(h.db, 1, 8));
    CHECK(b.cases.at(kA).remark ==
          "2 earlier unstable run(s) left out (a busy machine; --include-unstable keeps them)");
    CHECK(b.cases.at(kB).n == 10);
    CHECK(b.cases.at(kB).remark.empty());
    gate::HistoryOptions all;
    all.include_unstable = true;
    CHECK(gate::history_baseline(h.db, judged, all).cases.at(kA).n == 10);
  }
}
