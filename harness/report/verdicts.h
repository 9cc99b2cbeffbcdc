// The gate's verdicts for people and for CI, every format rendered from one model (GateReport):
// a console table, a markdown job summary and pull-request comment, GitHub workflow
// annotations, JUnit XML, and versioned JSON (docs/report-json.md). The HTML report (html.h)
// reads the same model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/gate/compare.h"
#include "harness/gate/validity.h"
#include "harness/report/format.h"

namespace attnprof::report {

// Version of the JSON report's layout; bumped when a field changes meaning or goes away
// (adding a field keeps it).
inline constexpr int kJsonSchemaVersion = 1;

// One op (or kernel) of a case's cost matrix on both sides of an A/B: what moved.
struct OpDiff {
  std::string name;    // "aten::bmm", or a kernel's name when kernel is true
  std::string shapes;  // input shapes; empty for kernels
  bool kernel = false;
  int base_calls = 0, head_calls = 0;
  double base_self_ns = 0, head_self_ns = 0;    // per call
  double base_total_ns = 0, head_total_ns = 0;  // per call
  std::int64_t base_bytes = 0, head_bytes = 0;
  // Change of self time summed over calls (head - base), what a row is ranked by.
  double delta_ns() const { return head_self_ns * head_calls - base_self_ns * base_calls; }
};

// Per op and per kernel, worst first (the largest increase of summed self time), ops that
// exist on one side only included. Device time where either side has it, else CPU time.
std::vector<OpDiff> diff_cost(const std::vector<core::CostRow>& base,
                              const std::vector<core::CostRow>& head);

// The first `rows` of a diff as a console table of `width` columns (0: unlimited); "" when empty.
std::string op_diff_console(const std::vector<OpDiff>& ops, std::size_t rows,
                            std::size_t width = kConsoleWidth);

// One memory figure of a case (core::kFragmentationMetrics) on both sides of an A/B.
struct MemoryDiff {
  std::string metric;
  double base = 0, head = 0;
  // The sides differ by more than the figure's floor (1 MiB, one page fault per call, one
  // retry or segment, 0.05x) and by more than 1.5x: a change worth a line on the console.
  bool moved = false;
};

// The figures both sides recorded, in kFragmentationMetrics' order (report/findings.cpp).
std::vector<MemoryDiff> diff_memory(const core::CaseResult& base, const core::CaseResult& head);

// A/B detail for one case: the paired rounds and, for regressions and improvements, the
// cost-matrix diff. `attnprof ab` fills this; compare leaves GateReport::ab empty.
struct AbCase {
  std::string key;
  std::vector<core::AbRound> rounds;
  std::vector<OpDiff> ops;         // diff_cost(base side's rows, head side's rows)
  std::vector<MemoryDiff> memory;  // diff_memory(base side's case, head side's), every case
};
struct AbDetail {
  core::Run base;                      // the base side's run (the head side is GateReport::run)
  std::string base_label, head_label;  // e.g. "merge base 1a2b3c", "head 4d5e6f"
  std::vector<AbCase> cases;
  // Both sides were the same build (one worker executable, the same arguments and plugin
  // files): an A/A, whose verdicts measure the machine's noise. Unknown (nullopt) when a stored
  // A/B is judged again (`compare --pair`): the store keeps no worker paths.
  std::optional<bool> same_build;
};

// What `attnprof ab` prints as its first line and every report of an A/A says, word for word:
// gate scripts look for it.
inline constexpr const char* kSameBuildNote =
    "A/A: both sides are the same build (one worker executable, the same arguments and "
    "plugins): the verdicts measure the noise of this machine, not a change";

// What an A/B's figures are, with its table in every report (console, markdown, HTML): its change
// is not the quotient of the two medians shown beside it.
inline constexpr const char* kPairedNote =
    "change and 99% CI are paired: the head/base ratio of each interleaved round, pooled over "
    "worker pairs. baseline and now are each side's median over its own samples, so their "
    "quotient can differ from change.";

struct GateReport {
  std::string mode = "compare";  // "compare" | "ab"
  std::vector<gate::CaseVerdict> verdicts;
  core::Run run;                   // the judged run (the head side of an A/B)
  std::string baseline;            // what it was judged against: a file, "history:main", a base
  std::vector<std::string> notes;  // sentences shown above the table (e.g. environmental run)
  std::optional<gate::RunValidity> validity;
  bool strict = false;         // inconclusive fails the gate (JUnit shows it as a failure)
  int exit_code = 0;           // the gate's decision, as the command exits
  std::optional<AbDetail> ab;  // present for `attnprof ab`
};

// The sentences every report shows with its verdicts: kSameBuildNote first for an A/A, then
// GateReport::notes.
std::vector<std::string> report_notes(const GateReport& r);

// "gate: 1 regression, 0 failed, 0 missing, 3 unchanged, 1 inconclusive, 0 improvement, 0 new",
// then "; findings: 1 kernels changed, 0 accuracy changed" when a case has one.
std::string verdict_counts(const std::vector<gate::CaseVerdict>& v);

// The console report: "baseline: ...", the table in the run's case order, the counts and the
// notes. Fits `width` columns (long keys wrap, reasons move to a line under their row);
// width 0 prints everything on one line per case (--wide).
std::string console_report(const GateReport& r, std::size_t width = kConsoleWidth);

// Markdown for $GITHUB_STEP_SUMMARY and the pull-request comment: the outcome, the counts,
// the notes, cases worst first (regressions by size), unchanged cases folded into <details>,
// and for an A/B what moved in each changed case. At most `limit` bytes: rows that do not fit
// are counted, not cut mid-table. GitHub allows 1 MiB per step summary and 65536 characters
// per comment; the default fits both.
std::string markdown_report(const GateReport& r, std::size_t limit = 60000);

// "::error title=...::message" lines for regressions, failures and missing cases, "::warning"
// for inconclusive ones and for an environmental run.
std::string annotations(const GateReport& r);

// JUnit XML: one <testcase> per case (classname suite.workload, name shape/kernel, time the
// median in seconds). Regressions, failures, missing cases and (strict) inconclusive ones are
// <failure>; inconclusive and ignored ones <skipped>; the rest pass.
std::string junit_report(const GateReport& r);

// JSON, schema "attnprof-gate" version kJsonSchemaVersion (docs/report-json.md). Unknown
// numbers are null, never NaN.
std::string json_report(const GateReport& r);

}  // namespace attnprof::report
