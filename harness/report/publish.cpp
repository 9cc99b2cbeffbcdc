// Writing a gate's reports to the files asked for and to GitHub Actions' job summary and
// annotations (publish.h).
#include "harness/report/publish.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "harness/report/html.h"
#include "harness/util/error.h"

namespace attnprof::report {

Outputs outputs_from_environment() {
  Outputs o;
  if (const char* s = std::getenv("GITHUB_STEP_SUMMARY"); s && *s) o.step_summary = s;
  o.github_annotations = std::getenv("GITHUB_ACTIONS") != nullptr;
  return o;
}

void write_file(const std::string& path, const std::string& text, bool append) {
  std::ofstream file(path, append ? std::ios::app : std::ios::trunc);
  if (!file || !(file << text) || !file.flush())
    throw util::EnvironmentError(path + ": cannot write");
}

void publish(const GateReport& report, const Outputs& outputs, std::FILE* out) {
  if (!outputs.markdown.empty() || !outputs.step_summary.empty()) {
    const std::string md = markdown_report(report);
    if (!outputs.markdown.empty()) write_file(outputs.markdown, md);
    if (!outputs.step_summary.empty()) write_file(outputs.step_summary, md, true);
  }
  if (!outputs.json.empty()) write_file(outputs.json, json_report(report));
  if (!outputs.junit.empty()) write_file(outputs.junit, junit_report(report));
  if (!outputs.html.empty()) write_file(outputs.html, html_gate(report));
  if (outputs.github_annotations) {
    fmt::print(out, "{}", annotations(report));
    std::fflush(out);
  }
}

}  // namespace attnprof::report
