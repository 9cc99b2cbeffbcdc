// Results in the formats other tools read, for `attnprof export --format`: teams that chart and
// alert with Bencher, github-action-benchmark, Apache Otava or PyTorch's OSS benchmark database
// feed them attnprof's figures without a converter of their own. docs/ci.md has one workflow
// step per tool; tests/ci/exports.sh checks each output against its consumer (Otava itself) or
// the consumer's published schema.
//
// Three formats hold one run (a report of one CI job): Bencher Metric Format, github-action-
// benchmark's customSmallerIsBetter, PyTorch's benchmark records. Otava reads a series: one CSV
// row per run, one column per case. Each writes the ok cases' median latency (the figure the
// gate and `attnprof changes` judge), with its confidence interval where the format has a place
// for one; cases that failed or were skipped have no figure and are left out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"
#include "harness/store/history.h"

namespace attnprof::report {

enum class ExportFormat { jsonl, bmf, gab, otava, pytorch };
std::optional<ExportFormat> parse_export_format(std::string_view);
inline constexpr const char* kExportFormats = "jsonl, bmf, gab, otava or pytorch";
// Whether the format holds one run (bmf, gab, pytorch) rather than a series or a history.
bool holds_one_run(ExportFormat);

// Bencher Metric Format: {"<case key>": {"latency": {"value", "lower_value", "upper_value"}}},
// Bencher's built-in latency measure, in nanoseconds; the bounds are the median's interval.
std::string to_bmf(const core::Run& run);
// github-action-benchmark's customSmallerIsBetter: [{"name", "unit": "ns", "value", "range",
// "extra"}], the range the interval's half-width ("± 12.5"), extra what it is and the run.
std::string to_gab(const core::Run& run);
// PyTorch's OSS benchmark database (schema v3): one record per case, {"benchmark", "model",
// "metric", "runners"}; metric "summary.median_ns", the model the case's preset, the backend its
// kernel, and every string map (extra_info) of strings only, as the database's Map(String,
// String) columns take them.
std::string to_pytorch(const core::Run& run);

// Apache Otava's CSV input: a header `time,commit,branch,run,<case key>...` and one row per run,
// oldest first, the time ISO 8601 in UTC. `rows` are store::history's of one metric (ordered by
// case, then run start). Otava's CSV has no empty cells, so a case missing from any of the runs
// is left out and named in `left_out`; util::InputError when the rows span more than one
// environment (a series never mixes machines; --env picks one).
struct OtavaExport {
  std::string csv;
  std::vector<std::string> cases;     // the CSV's metric columns, in order
  std::vector<std::string> left_out;  // cases not in every run
  int runs = 0;
};
OtavaExport to_otava(const std::vector<store::HistoryRow>& rows);
// An Otava configuration (its `tests:` YAML) with one test, `name`, reading `csv_path`: the
// time column, commit and branch as attributes, and each case a metric whose direction is -1
// (a larger latency is worse).
std::string otava_config(const std::string& name, const std::string& csv_path,
                         const std::vector<std::string>& cases);

}  // namespace attnprof::report
