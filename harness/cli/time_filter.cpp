// --since and --until (time_filter.h): dates and day counts read within the clock's range.
#include "harness/cli/time_filter.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <limits>
#include <regex>
#include <stdexcept>

#include "harness/cli/bounds.h"
#include "harness/core/clock.h"

namespace attnprof::cli {
namespace {

using std::chrono::seconds;

// The instants the epoch clock holds: int64 nanoseconds, 1677-09-21T00:12:44Z to
// 2262-04-11T23:47:16Z, in whole seconds.
constexpr std::int64_t kClockMaxS = std::numeric_limits<std::int64_t>::max() / 1'000'000'000;

}  // namespace

std::int64_t parse_time_filter(const std::string& text, std::int64_t now_ns, bool end_of_day) {
  static const std::regex days(R"(([0-9]+)d)");
  static const std::regex date(
      R"(([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?Z?)?)");
  std::smatch m;
  if (std::regex_match(text, m, days)) {
    long long n = 0;
    const std::string digits = m[1];
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc{} || n > kMaxDaysBack)
      throw std::invalid_argument(fmt::format(
          "\"{}\" is more days than the clock spans (at most {:.0f}d)", text, kMaxDaysBack));
    return now_ns - n * 86400LL * 1'000'000'000LL;
  }
  if (!std::regex_match(text, m, date))
    throw std::invalid_argument(
        fmt::format("\"{}\" is not a date (YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS][Z]) or Nd", text));
  auto num = [&](int i) { return m[i].matched ? std::stoi(m[i].str()) : 0; };
  const std::chrono::year_month_day ymd{std::chrono::year(num(1)),
                                        std::chrono::month(static_cast<unsigned>(num(2))),
                                        std::chrono::day(static_cast<unsigned>(num(3)))};
  if (!ymd.ok()) throw std::invalid_argument(fmt::format("\"{}\": no such date", text));
  if (num(4) > 23 || num(5) > 59 || num(6) > 60)
    throw std::invalid_argument(fmt::format("\"{}\": no such time of day", text));
  seconds at =
      std::chrono::sys_days(ymd).time_since_epoch() + seconds(num(4) * 3600 + num(5) * 60 + num(6));
  const bool bare = !m[4].matched;
  if (bare && end_of_day) at += seconds(86400 - 1);
  if (at.count() > kClockMaxS || at.count() < -kClockMaxS)
    throw std::invalid_argument(fmt::format(
        "\"{}\" is past the clock's range (1677-09-21T00:12:44Z to 2262-04-11T23:47:16Z)", text));
  return at.count() * 1'000'000'000LL + (bare && end_of_day ? 999'999'999LL : 0);
}

CLI::Validator time_filter_check(bool end_of_day) {
  return CLI::Validator(
      [end_of_day](std::string& s) -> std::string {
        try {
          parse_time_filter(s, core::epoch_ns(), end_of_day);
          return "";
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "");
}

}  // namespace attnprof::cli
