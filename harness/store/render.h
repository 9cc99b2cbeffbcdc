// Text for the history subcommands (history, trend, show, changes): tables, CSV, JSON, the
// terminal sparkline, and the time formats they read and print. Kept here, not in the CLI, so
// the unit tests check the exact text without linking the CLI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"
#include "harness/store/changes.h"
#include "harness/store/history.h"

namespace attnprof::store {

enum class Format { table, csv, json };
std::optional<Format> parse_format(std::string_view);

// ▁▂▃▄▅▆▇█ scaled from the series' min to its max; a flat series is all ▄.
std::string sparkline(std::span<const double> values);

// Tables fit `width` columns (util::Table: columns left out, the case key never cut); 0: all.
std::string format_history(const std::vector<HistoryRow>& rows, Format format,
                           std::size_t width = 0);
std::string format_changes(const std::vector<CaseChange>& changes, Format format,
                           std::size_t width = 0);
// The run's header fields (id, commit, start, status, environment, PR, CI link), one a line;
// its cases are report::results_table's, as `run` printed them.
std::string format_run_header(const core::Run& run);

// One CSV record: fields with a comma, a quote or a newline quoted (RFC 4180), then "\n".
std::string csv_line(const std::vector<std::string>& fields);

std::string format_time(std::int64_t epoch_ns);  // "2026-11-30T10:37:15Z"
// "2026-11-30", "2026-11-30T10:37[:15][Z]", or "Nd" (N days before now_ns). nullopt if neither.
std::optional<std::int64_t> parse_time(std::string_view text, std::int64_t now_ns);

}  // namespace attnprof::store
