// Human decisions applied to the gate's verdicts (store::Annotation, `attnprof annotate`):
//   accept  a regression (or a missing case) of the named run is intended: verdict `accepted`,
//           which passes. A correctness failure cannot be accepted; ignore the case instead.
//   ignore  the case is not gated: verdict `ignored`, shown with what it would have been.
//   reset   no effect on verdicts; it starts a new history segment (history_baseline.h).
// An annotation applies to a case of a run when its glob matches the case key (or one of the
// case's aliases), and each of its run id, branch and environment fingerprint (a prefix) is
// empty or matches. Ignore wins over accept; among several of a kind the newest is quoted.
//
// Commit trailers: `Perf-Accept: <glob> <reason>` lines in a commit message (git's trailer
// syntax, key matched case-insensitively) become accept annotations for the judged run.
#pragma once

#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/gate/compare.h"
#include "harness/store/database.h"
#include "harness/util/glob.h"

namespace attnprof::gate {

using util::glob_match;  // util/glob.h: `*` crosses `/`

// Whether `a` applies to the case (key plus aliases) in a run with this id, branch and
// environment fingerprint.
bool applies(const store::Annotation& a, const std::vector<std::string>& case_keys,
             const std::string& run_id, const std::string& branch, const std::string& fingerprint);

// Rewrites verdicts of `run` that an accept or ignore annotation covers; returns how many
// changed. The reason keeps the original: "accepted by alice (#4): new tiling; was regression:
// 1.120x (...)". A finding that would fail the gate (findings.h) no longer does, and says so:
// "kernels changed: a -> b (accepted by alice (#4): new tiling)".
int apply_annotations(std::vector<CaseVerdict>& verdicts, const core::Run& run,
                      const std::vector<store::Annotation>& annotations);

// Accept annotations (run_id = run_id, author = author) from the Perf-Accept trailers of a
// commit message. util::InputError "commit message:LINE: ..." for a trailer without a reason.
std::vector<store::Annotation> parse_accept_trailers(const std::string& message,
                                                     const std::string& run_id,
                                                     const std::string& author);

}  // namespace attnprof::gate
