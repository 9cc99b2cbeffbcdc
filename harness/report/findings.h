// The findings beside the time verdicts (gate/findings.h: kernels changed, accuracy changed) as
// the console, markdown and HTML reports show them, and an A/B's memory figures
// (core/metric_names.h), base beside head. verdicts.cpp and html.cpp place them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "harness/gate/compare.h"
#include "harness/report/verdicts.h"

namespace attnprof::report {

// "findings: 1 kernels changed, 0 accuracy changed", or "" when no verdict has one.
std::string finding_counts(const std::vector<gate::CaseVerdict>& verdicts);

// The finding's sentence, and when it fails the gate the option that made it:
// "kernels changed: a -> b (fails the gate: --fail-on-kernel-change)".
std::string finding_text(const gate::Finding& f);

// Every finding, one whole line each: "  KEY: SENTENCE", under a heading; "" when there is none.
std::string findings_console(const std::vector<gate::CaseVerdict>& verdicts);
// The same as a markdown section with a table (case, finding, gate); "" when there is none.
std::string findings_markdown(const std::vector<gate::CaseVerdict>& verdicts);

// The cases of an A/B whose memory figures moved, as a table (case, figure, base, head) under a
// heading; "" when none moved. The markdown lists every case's figures, folded.
std::string memory_console(const AbDetail& ab, std::size_t width);
std::string memory_markdown(const AbDetail& ab);

}  // namespace attnprof::report
