// The bounds of the numeric options that reach a worker, refused when parsed (exit 2, the
// option named) instead of hanging or overflowing later: --threads (1 to 4 x the CPUs this
// process may use, util/machine.h) and --case-timeout (finite seconds, above 0, at most a day:
// a deadline in nanoseconds past that overflowed and every case "hung" at once). Header-only:
// attnprof-worker, which links no attnprof CLI code, bounds its --threads alike.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "harness/util/machine.h"

namespace attnprof::cli {

inline constexpr double kMaxCaseTimeoutS = 86400;

inline CLI::Validator thread_bound() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        long long v = 0;
        auto [p, err] = std::from_chars(s.data(), s.data() + s.size(), v);
        const int most = util::max_threads();
        if (err == std::errc::invalid_argument || p != s.data() + s.size())
          return "";  // not an integer: CLI11's conversion says so
        if (err == std::errc{} && v >= 1 && v <= most) return "";
        return fmt::format(
            "must be between 1 and {} ({} x the {} CPUs this process may use), "
            "got {}",
            most, util::kThreadsPerCpu, util::usable_cpus(), s);
      },
      "1..4xCPUs");
}

inline CLI::Validator case_timeout_bound() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size()) return "";  // CLI11's conversion says so
        if (std::isfinite(v) && v > 0 && v <= kMaxCaseTimeoutS) return "";
        return fmt::format(
            "must be a number of seconds above 0 and at most {:.0f} (a day), got "
            "{} (leave it out for each case's own deadline)",
            kMaxCaseTimeoutS, s);
      },
      "SECONDS");
}

}  // namespace attnprof::cli
