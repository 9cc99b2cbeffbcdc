// What `compare` and `ab` share once they have verdicts: accept/ignore annotations and
// Perf-Accept commit trailers, the report (console, and through report::publish the markdown
// file and job summary, JSON, JUnit, HTML and workflow annotations), and recording the verdicts
// in the history. And `ab`'s judgement of a stored A/B, which `compare --pair` runs again.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/gate/compare.h"
#include "harness/report/verdicts.h"

namespace attnprof::store {
class Database;
}

namespace attnprof::cli {

// "5%" or a fraction like 0.05, through the scenario language's own number parsers.
double parse_tolerance(const std::string& text);

// Applies the database's annotations, and with `from_commit` the Perf-Accept trailers of the
// commit(s) under test (added to the database when `record`).
void apply_notes(std::vector<gate::CaseVerdict>& verdicts, const core::Run& run,
                 store::Database& db, bool from_commit, bool record);

// --fail-on-kernel-change, --fail-on-accuracy and --accuracy-factor: the rules of the findings
// beside the time verdicts (gate/findings.h), for compare and ab alike.
void add_finding_options(CLI::App& sub, gate::FindingRules& rules);

// The files a gate writes, and the console's width.
struct ReportFiles {
  std::string markdown, json, junit, html;
  bool wide = false;
};
void add_report_options(CLI::App& sub, ReportFiles& files);
// Prints the console report, then writes every file named and, under GitHub Actions, the job
// summary and annotations. stdout is flushed, so stderr that follows never lands inside it.
void publish_report(const report::GateReport& report, const ReportFiles& files);

// Stores the verdicts with the run, under `label` ("history:main", a file, "ab:<pair>").
void record_verdicts(store::Database& db, const std::string& run_id,
                     const std::vector<gate::CaseVerdict>& verdicts, const std::string& label);

// Judges a stored A/B (attnprof ab's two runs and their rounds) with the per-op diff of every
// regression and improvement: what `ab` does at its end and `compare --pair` does again later
// (another tolerance, new annotations). Returns the exit code; the verdicts in `verdicts` when
// one is given.
struct PairJudgement {
  gate::Options options;
  ReportFiles files;
  bool accept_from_commit = false;
  bool record = true;
  int diff_rows = 8;
  std::vector<std::string> notes;  // shown above the table
  // Whether both sides were the same build (report::AbDetail::same_build): ab knows, a stored
  // pair judged again does not.
  std::optional<bool> same_build;
  std::map<std::string, double> pair_seconds;  // from ab: what one more pair costs each case
};
int judge_pair(store::Database& db, const std::string& ref, const PairJudgement& judgement,
               std::vector<gate::CaseVerdict>* verdicts = nullptr);

}  // namespace attnprof::cli
