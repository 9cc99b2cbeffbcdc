// The one rule for numeric options, on attnprof's command line and on attnprof-worker's: every
// option that takes a number has a range, checked when parsed (exit 2, the option named, before
// anything is opened or started). An option declares its own with ->check(bound(Range{...}));
// bound_every_number gives every other one the default, a finite number at least 0, when the
// whole app is declared, so an option added later cannot take nan, inf or a negative value
// without a word. Why a range everywhere: `ab --batch-ms nan` broke the base side's protocol and
// the gate passed, `--case-timeout 1e10` overflowed a deadline in nanoseconds and every case
// "hung" at once, `prune --older-than -1` pruned every run. Header-only: attnprof-worker, which
// links no attnprof CLI code, bounds its options alike.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "harness/util/machine.h"

namespace attnprof::cli {

inline constexpr double kMaxCaseTimeoutS = 86400;
// Days the epoch clock spans each way (int64 nanoseconds: 106751.99 days): "N days ago" past it
// overflowed, and pruned or listed every run.
inline constexpr double kMaxDaysBack = 106'751;

// The values a numeric option takes: from lo (or above it) to hi (or below it), finite.
struct Range {
  double lo = 0;
  double hi = std::numeric_limits<double>::max();  // this: no upper bound but finiteness
  bool above = false;                              // lo itself is refused
  bool below = false;                              // hi itself is refused
  const char* what = "a number";                   // "a number of seconds", "a whole number"
  std::string hi_why = "";                         // "(a day)" after the upper bound
  std::string note = "";                           // after the value, e.g. what to do instead

  bool contains(double v) const {
    return std::isfinite(v) && (above ? v > lo : v >= lo) && (below ? v < hi : v <= hi);
  }
  std::string describe() const {
    std::string s = fmt::format("{} {} {}", what, above ? "above" : "at least", lo);
    if (hi < std::numeric_limits<double>::max())
      s += fmt::format(" and {} {}{}", below ? "below" : "at most", hi,
                       hi_why.empty() ? "" : " " + hi_why);
    return s;
  }
};

inline constexpr const char* kBoundName = "bound";

// The check that holds an option to `r`; "--opt: must be <r>, got <value>" otherwise. A value
// that is not a number at all is left to CLI11's conversion, which names the option too.
inline CLI::Validator bound(Range r, std::string help_text = "") {
  return CLI::Validator(
      [r](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size()) return "";
        if (r.contains(v)) return "";
        return fmt::format("must be {}, got {}{}", r.describe(), s,
                           r.note.empty() ? "" : " (" + r.note + ")");
      },
      std::move(help_text), kBoundName);
}

inline bool has_bound(CLI::Option& o) {
  try {
    o.get_validator(kBoundName);
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

// An option whose value is a number (or a list of numbers), as CLI11 types it.
inline bool takes_number(const CLI::Option& o) {
  const std::string t = o.get_type_name();
  return t == "INT" || t == "UINT" || t == "FLOAT";
}

// Every numeric option of `app` and its subcommands without a bound of its own gets the default.
inline void bound_every_number(CLI::App& app) {
  for (CLI::Option* o : app.get_options())
    if (takes_number(*o) && !has_bound(*o)) o->check(bound(Range{}));
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    bound_every_number(*sub);
}

inline CLI::Validator thread_bound() {
  const int most = util::max_threads();
  return bound(Range{.lo = 1,
                     .hi = static_cast<double>(most),
                     .what = "a whole number",
                     .hi_why = fmt::format("({} x the {} CPUs this process may use)",
                                           util::kThreadsPerCpu, util::usable_cpus())},
               "1..4xCPUs");
}

inline CLI::Validator case_timeout_bound() {
  return bound(Range{.lo = 0,
                     .hi = kMaxCaseTimeoutS,
                     .above = true,
                     .what = "a number of seconds",
                     .hi_why = "(a day)",
                     .note = "leave it out for each case's own deadline"},
               "SECONDS");
}

}  // namespace attnprof::cli
