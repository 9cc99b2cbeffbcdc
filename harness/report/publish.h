// Where a gate's reports go: the files the user asked for, the GitHub Actions job summary and
// annotations. `attnprof compare` and `attnprof ab` both publish through here, so every report
// of a gate says the same thing.
#pragma once

#include <cstdio>
#include <string>

#include "harness/report/verdicts.h"

namespace attnprof::report {

struct Outputs {
  std::string markdown, json, junit, html;  // files to write; empty: none
  // $GITHUB_STEP_SUMMARY: the markdown is appended there (another step may have written too).
  std::string step_summary;
  bool github_annotations = false;  // $GITHUB_ACTIONS: ::error / ::warning lines on stdout
};

// Outputs from the environment: GITHUB_STEP_SUMMARY and GITHUB_ACTIONS.
Outputs outputs_from_environment();

// Writes every output named; util::EnvironmentError "<path>: cannot write" when one fails.
// Annotations go to `out` (stdout: GitHub reads workflow commands from there).
void publish(const GateReport& report, const Outputs& outputs, std::FILE* out = stdout);

// Replaces (append false) or extends a file; util::EnvironmentError when it cannot.
void write_file(const std::string& path, const std::string& text, bool append = false);

}  // namespace attnprof::report
