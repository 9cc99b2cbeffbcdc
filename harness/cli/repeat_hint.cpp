// The hint after a misplaced value of a repeatable option (repeat_hint.h).
#include "harness/cli/repeat_hint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "harness/cli/options.h"

namespace attnprof::cli {
namespace {

CLI::App* subcommand_named(CLI::App& app, const std::string& name) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

// As typed into a shell: quoted unless it is plain.
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || std::strchr("_./=:,+-@%", c);
  });
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::optional<AfterValue> after_repeatable(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (CLI::App* sub = subcommand_named(*at, arg)) {
      at = sub;
      continue;
    }
    const auto eq = arg.find('=');
    const CLI::Option* o =
        arg.starts_with("--") ? at->get_option_no_throw(arg.substr(0, eq)) : nullptr;
    if (!o || !collects_values(*o)) continue;
    int next = i + 1;
    std::string value = arg.substr(eq == std::string::npos ? arg.size() : eq + 1);
    if (eq == std::string::npos && next < argc) value = argv[next++];
    if (next < argc && argv[next][0] != '-')
      return AfterValue{argv[next], arg.substr(0, eq), value};
    i = next - 1;
  }
  return std::nullopt;
}

void print_repeat_hint(const AfterValue& a) {
  auto use = [&](const std::string& v) {
    return v.starts_with("-") ? a.option + "=" + shell_word(v) : a.option + " " + shell_word(v);
  };
  fmt::print(stderr,
             "note: \"{}\" is not a second {} value: {} takes one value each time; to give two, "
             "repeat it: {} {}\n",
             a.token, a.option, a.option, use(a.value), use(a.token));
}

bool names_scenario(const std::string& token) {
  return token.ends_with(".yaml") || token.ends_with(".yml");
}

}  // namespace attnprof::cli
