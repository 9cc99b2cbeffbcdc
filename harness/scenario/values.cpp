// Typed reads of scenario values (values.h): integers, numbers, durations, percentages,
// choices and mappings' keys, a wrong one reported at the value.
#include "harness/scenario/values.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace attnprof::scenario {

std::string got(const Node& n) {
  if (n.is_scalar()) return fmt::format("got \"{}\"", n.scalar);
  return fmt::format("got {}", describe(n));
}

std::optional<long long> parse_int(std::string_view s) {
  long long v = 0;
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<double> parse_duration_s(std::string_view s) {
  struct Unit {
    std::string_view suffix;
    double seconds;
  };
  // Longest suffixes first: "ms" must not be read as "m" + "s".
  static constexpr Unit units[] = {{"min", 60},  {"ms", 1e-3}, {"us", 1e-6},
                                   {"ns", 1e-9}, {"s", 1},     {"m", 60}};
  for (const auto& u : units) {
    if (s.size() > u.suffix.size() && s.ends_with(u.suffix)) {
      std::string_view num = s.substr(0, s.size() - u.suffix.size());
      while (!num.empty() && num.back() == ' ') num.remove_suffix(1);
      auto v = parse_number(num);
      return v ? std::optional<double>(*v * u.seconds) : std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<double> parse_percent(std::string_view s) {
  if (s.size() < 2 || s.back() != '%') return std::nullopt;
  auto v = parse_number(s.substr(0, s.size() - 1));
  return v ? std::optional<double>(*v / 100) : std::nullopt;
}

std::optional<long long> read_int(const Node& n, std::string_view name, long long min,
                                  long long max, Diags& d) {
  auto v = n.is_scalar() ? parse_int(n.scalar) : std::nullopt;
  if (!v) {
    d.error(n.loc, fmt::format("{}: expected an integer, {}", name, got(n)));
    return std::nullopt;
  }
  if (*v < min) {
    d.error(n.loc, fmt::format("{} must be at least {}, got {}", name, min, *v));
    return std::nullopt;
  }
  if (*v > max) {
    d.error(n.loc, fmt::format("{} must be at most {}, got {}", name, max, *v));
    return std::nullopt;
  }
  return v;
}

std::optional<double> read_positive(const Node& n, std::string_view name, Diags& d) {
  auto v = n.is_scalar() ? parse_number(n.scalar) : std::nullopt;
  if (!v) {
    d.error(n.loc, fmt::format("{}: expected a number, {}", name, got(n)));
    return std::nullopt;
  }
  if (*v <= 0) {
    d.error(n.loc, fmt::format("{} must be positive, got {}", name, n.scalar));
    return std::nullopt;
  }
  return v;
}

std::optional<double> read_duration_s(const Node& n, std::string_view name,
                                      std::string_view implied_unit, Diags& d) {
  std::optional<double> v;
  if (n.is_scalar()) {
    v = parse_duration_s(n.scalar);
    if (!v && !implied_unit.empty()) {
      auto bare = parse_number(n.scalar);
      if (bare) v = parse_duration_s(fmt::format("{}{}", *bare, implied_unit));
    }
  }
  if (!v) {
    bool bare = n.is_scalar() && parse_number(n.scalar);
    d.error(n.loc, fmt::format("{}: expected a duration such as 200ms or 10s{}, {}", name,
                               bare ? " (a unit is required)" : "", got(n)));
    return std::nullopt;
  }
  if (*v < 0) {
    d.error(n.loc, fmt::format("{} must not be negative, got {}", name, n.scalar));
    return std::nullopt;
  }
  if (*v > kMaxDurationS) {
    d.error(n.loc, fmt::format("{} must be at most {:.0f}s (a day), got {}", name, kMaxDurationS,
                               n.scalar));
    return std::nullopt;
  }
  return v;
}

std::optional<double> read_percent(const Node& n, std::string_view name, Diags& d) {
  auto v = n.is_scalar() ? parse_percent(n.scalar) : std::nullopt;
  if (!v) {
    d.error(n.loc, fmt::format("{}: expected a percentage such as 3%, {}", name, got(n)));
    return std::nullopt;
  }
  if (*v <= 0 || *v >= 1) {
    d.error(n.loc, fmt::format("{} must be between 0% and 100%, got {}", name, n.scalar));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> read_bool(const Node& n, std::string_view name, Diags& d) {
  if (n.is_scalar()) {
    if (n.scalar == "true" || n.scalar == "yes" || n.scalar == "on") return true;
    if (n.scalar == "false" || n.scalar == "no" || n.scalar == "off") return false;
  }
  d.error(n.loc, fmt::format("{}: expected true or false, {}", name, got(n)));
  return std::nullopt;
}

std::optional<std::string> read_string(const Node& n, std::string_view name, Diags& d) {
  if (n.is_scalar() && !n.scalar.empty()) return n.scalar;
  d.error(n.loc, fmt::format("{}: expected a string, {}", name, got(n)));
  return std::nullopt;
}

std::optional<std::string> read_choice(const Node& n, std::string_view name,
                                       const std::vector<std::string>& choices, Diags& d) {
  if (n.is_scalar())
    for (const auto& c : choices)
      if (n.scalar == c) return c;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  d.error(n.loc, fmt::format("{}: expected one of {}, {}{}", name, list, got(n),
                             n.is_scalar() ? did_you_mean(n.scalar, choices) : ""));
  return std::nullopt;
}

bool check_map(const Node& map, std::string_view where, const std::vector<std::string>& known,
               Diags& d) {
  if (!map.is_map()) {
    d.error(map.loc, fmt::format("{}: expected a mapping, {}", where, got(map)));
    return false;
  }
  for (const auto& e : map.items) {
    bool ok = false;
    for (const auto& k : known) ok = ok || e.key == k;
    if (!ok)
      d.error(e.key_loc,
              fmt::format("unknown key \"{}\" in {}{}", e.key, where, did_you_mean(e.key, known)));
  }
  return true;
}

std::vector<const Node*> read_axis(const Node& n, std::string_view name, Diags& d) {
  std::vector<const Node*> out;
  if (n.is_scalar()) {
    out.push_back(&n);
  } else if (n.is_seq()) {
    if (n.items.empty()) d.error(n.loc, fmt::format("{}: the list is empty", name));
    for (const auto& item : n.items) {
      if (item.is_scalar())
        out.push_back(&item);
      else
        d.error(item.loc, fmt::format("{}: expected a value, {}", name, got(item)));
    }
  } else {
    d.error(n.loc, fmt::format("{}: expected a value or a list of values, {}", name, got(n)));
  }
  return out;
}

}  // namespace attnprof::scenario
