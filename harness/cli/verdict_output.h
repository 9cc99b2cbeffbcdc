// What `compare` and `ab` do with their verdicts, in one place: apply accept/ignore annotations
// (and Perf-Accept commit trailers), print the table and counts, write the markdown report
// (and append it to $GITHUB_STEP_SUMMARY), emit GitHub workflow annotations, write JSON, record
// the verdicts in the history, and return the gate's exit code.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/gate/compare.h"

namespace attnprof::store {
class Database;
}

namespace attnprof::cli {

struct VerdictOutput {
  store::Database* db = nullptr;  // where annotations come from and verdicts go
  bool record = true;             // store the verdicts
  core::Run* run = nullptr;       // the run judged (the head of an A/B)
  std::string baseline_text;      // shown: a file, "history:main", "A/B pair ..."
  std::string baseline_label;     // stored with each verdict
  std::string markdown_path, json_path;
  bool accept_from_commit = false;
  std::vector<std::string> md_notes;  // quoted under the markdown counts
  nlohmann::json json_extra;          // merged into the JSON report
};

int emit_verdicts(std::vector<gate::CaseVerdict>& verdicts, const gate::Options& options,
                  const VerdictOutput& out);

// Judges a stored A/B (attnprof ab's two runs and their rounds) and reports it through
// emit_verdicts, with the per-op diff of every regression and improvement: what `ab` does at its
// end and `compare --pair` does again later (another tolerance, new annotations).
struct PairJudgement {
  gate::Options options;
  std::string markdown, json;
  bool accept_from_commit = false;
  bool record = true;
  int diff_rows = 8;
  nlohmann::json json_extra;
};
int judge_pair(store::Database& db, const std::string& ref, const PairJudgement& judgement);

// "5%" or a fraction like 0.05, through the scenario language's own number parsers.
double parse_tolerance(const std::string& text);

}  // namespace attnprof::cli
