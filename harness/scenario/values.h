// Typed reads of scenario values: integers, numbers, durations ("200ms"), percentages ("3%"),
// choices from a fixed set, and the keys a mapping may hold. A wrong type or unit is reported
// at the value and the read yields nothing, so the caller keeps going and finds more errors.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/diags.h"
#include "harness/scenario/tree.h"

namespace attnprof::scenario {

// Parsers of one scalar's text, no diagnostics: nullopt when it is not one.
std::optional<long long> parse_int(std::string_view);
std::optional<double> parse_number(std::string_view);  // finite only
// "200ms", "1.5s", "2min", "500us", "10ns" -> seconds.
std::optional<double> parse_duration_s(std::string_view);
// "3%" -> 0.03.
std::optional<double> parse_percent(std::string_view);

// Reads reporting errors as "<name> ...: expected ..., got ...".
std::optional<long long> read_int(const Node&, std::string_view name, long long min, long long max,
                                  Diags&);
std::optional<double> read_positive(const Node&, std::string_view name, Diags&);
// The longest duration a scenario may give (a day): a case's deadline, 60 s + 3 x (warm-up +
// budget), is a point on the steady clock in int64 nanoseconds, and 1e10 s overflowed it, so the
// case "hung" at once instead of validate naming the value. `--case-timeout` has the same bound.
inline constexpr double kMaxDurationS = 86400;
// A duration from 0 to kMaxDurationS; with implied_unit (e.g. "ms" for warmup_ms) a bare number
// is in that unit.
std::optional<double> read_duration_s(const Node&, std::string_view name,
                                      std::string_view implied_unit, Diags&);
std::optional<double> read_percent(const Node&, std::string_view name, Diags&);
std::optional<bool> read_bool(const Node&, std::string_view name, Diags&);
std::optional<std::string> read_string(const Node&, std::string_view name, Diags&);
std::optional<std::string> read_choice(const Node&, std::string_view name,
                                       const std::vector<std::string>& choices, Diags&);

// Reports every key of `map` not in `known` ("unknown key "x" in <where> (did you mean ...)").
// False (and an error) when `map` is not a mapping.
bool check_map(const Node& map, std::string_view where, const std::vector<std::string>& known,
               Diags&);

// A value that may be one scalar or a list of them (a matrix axis): its scalars. A nested list
// or mapping is reported and left out.
std::vector<const Node*> read_axis(const Node&, std::string_view name, Diags&);

// "got "abc"" for a scalar, "got a list" otherwise.
std::string got(const Node&);

}  // namespace attnprof::scenario
