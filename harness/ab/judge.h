// A stored A/B judged: the paired gate over its rounds (gate/paired.h), and the report's A/B
// detail, every case's rounds and, for every regression and improvement, the diff of the two
// sides' cost matrices. What `attnprof ab` does at its end and `compare --pair` does again later
// (another tolerance, new annotations); the caller publishes and records it.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/gate/paired.h"
#include "harness/report/verdicts.h"
#include "harness/store/database.h"

namespace attnprof::ab {

struct Judging {
  gate::Options options;
  std::vector<std::string> notes;  // shown above the table
  // Whether both sides were the same build (report::AbDetail::same_build): ab knows, a stored
  // pair judged again does not.
  std::optional<bool> same_build;
  int diff_rows = 8;      // rows of each per-op diff on the console
  std::size_t width = 0;  // the console's, for those diffs; 0: as wide as they are
  std::map<std::string, double> pair_seconds;  // from ab: what one more pair costs each case
  // Annotations and commit trailers, applied to the verdicts before the report reads them.
  std::function<void(std::vector<gate::CaseVerdict>&, const core::Run& head)> annotate;
};

struct Judged {
  report::GateReport report;  // exit_code included
  std::string moved;          // "what moved in KEY (...)" and its diff, per changed case
  std::string pair_id, head_run;
};

// The pair `ref` names ("latest", a pair id or a prefix of it); nullopt when there is none.
// util::EnvironmentError when one of its runs is gone.
std::optional<Judged> judge_pair(store::Database& db, const std::string& ref, const Judging& j);

}  // namespace attnprof::ab
