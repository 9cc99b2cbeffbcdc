// The results table of a run, as `attnprof run` prints it: one row per case.
#pragma once

#include <string>

#include "harness/core/types.h"
#include "harness/report/format.h"

namespace attnprof::report {

// Fits `width` columns: long keys wrap, notes (a failure's message) go under their row, one
// line each. Width 0: everything on one line per case (--wide).
std::string results_table(const core::Run& run, std::size_t width = kConsoleWidth);
// What a case's row says beside its figures, first things first: a busy machine's flag
// (core/stability.h), "not checked (reference: none)", the case's own message (a failure's
// error, a skip's reason) or, with `backend` and none, the SDPA backend chosen where it is not the
// kernel's name (for tables without a backend column), a torch.compile variant's compile
// (compile_note), a block-sparse kernel's block mask (block_mask_note), a block or layer case's
// attention share ("attention 4.3% of the layer"), and
// last "not converged". The console results table and the HTML run page say
// the same.
std::string case_note(const core::CaseResult& r, bool backend);
// "compiled in 35.3 s (fresh cache): 2 graphs, 1 graph break" from a case's compile.* metrics;
// "" for a case that compiled nothing.
std::string compile_note(const core::CaseResult& r);
// "block mask built in 1.2 ms, executes 1.94x the useful FLOPs" from flex's metrics; "" for
// kernels without them.
std::string block_mask_note(const core::CaseResult& r);
// "12 cases: 10 ok, 1 failed, 1 skipped, 0 error"
// Wrapped to `width` columns like the table above it (0: one line, for --wide).
std::string status_counts(const core::Run& run, std::size_t width = 0);

}  // namespace attnprof::report
