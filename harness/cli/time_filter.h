// --since and --until, which history, trend, changes, export, push and pull take: a date
// ("YYYY-MM-DD[THH:MM[:SS]][Z]", UTC) or "Nd" (N days ago), as epoch nanoseconds. Read against
// the clock's range (int64 nanoseconds: 1677-09-21T00:12:44Z to 2262-04-11T23:47:16Z), where a
// date or a day count past it overflowed and the filter took every run, and against the
// calendar (2026-02-30 is no date).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace attnprof::cli {

// `text` as epoch nanoseconds; a bare date is its day's start, or with `end_of_day` its last
// nanosecond (as people read "--until 2026-11-30"). std::invalid_argument saying what is wrong.
std::int64_t parse_time_filter(const std::string& text, std::int64_t now_ns, bool end_of_day);

// The check --since (end_of_day false) and --until (true) carry: refused when parsed, exit 2
// with the option named.
CLI::Validator time_filter_check(bool end_of_day);

}  // namespace attnprof::cli
