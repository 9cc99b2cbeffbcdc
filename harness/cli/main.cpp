// attnprof's entry point: the table of subcommands, and the one place that turns errors into
// exit codes (0 pass, 1 gate failed, 2 bad input, 3 environment or harness failure).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "harness/cli/command.h"
#include "harness/cli/commands.h"
#include "harness/cli/options.h"
#include "harness/costmatrix/table.h"
#include "harness/util/error.h"
#include "harness/worker/protocol.h"

namespace attnprof::cli {

void add_db_option(CLI::App& sub, std::string& path) {
  const char* env = std::getenv("ATTNPROF_DB");
  path = env && *env ? env : "attnprof.db";
  sub.add_option("--db", path, "SQLite history (default: $ATTNPROF_DB, else ./attnprof.db)")
      ->check(
          [](const std::string& v) -> std::string {
            // A server is shared by a fleet; commands read and write a local slice of it.
            if (!v.starts_with("postgresql://") && !v.starts_with("postgres://")) return "";
            return "a PostgreSQL server is not a history file: take a slice of it with "
                   "`attnprof pull --from URL --db FILE` and send runs with `attnprof push`";
          },
          "");
}

std::string sort_or_bad_input(const std::vector<core::CostRow>& rows, const std::string& sort,
                              int row_limit) {
  try {
    return costmatrix::render_table(rows, sort, row_limit);
  } catch (const std::invalid_argument& e) {
    throw util::InputError(util::Diagnostic{"--sort", 0, 0, e.what()});
  }
}

namespace {

// A token right after a repeatable option's value: "b*" in `run --case 'a*' 'b*'`, which the
// option took as a second value before each took one. A bad-input error naming it says how to
// give both.
struct AfterValue {
  std::string token, option, value;
};

CLI::App* subcommand_named(CLI::App& app, const std::string& name) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

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

void print_repeat_hint(const AfterValue& a) {
  auto use = [&](const std::string& v) {
    return v.starts_with("-") ? a.option + "=" + shell_word(v) : a.option + " " + shell_word(v);
  };
  fmt::print(stderr,
             "note: \"{}\" is not a second {} value: {} takes one value each time; to give two, "
             "repeat it: {} {}\n",
             a.token, a.option, a.option, use(a.value), use(a.token));
}

// A scenario file that is not there after --case is a scenario file, not a misplaced glob.
bool names_scenario(const std::string& token) {
  return token.ends_with(".yaml") || token.ends_with(".yml");
}

}  // namespace

}  // namespace attnprof::cli

int main(int argc, char** argv) {
  using namespace attnprof;
  // Whole lines: stdout (reports) and stderr (progress, warnings) go to one CI log, and a
  // buffered report must not be cut by a warning in the middle of its line.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CLI::App app{"attnprof: regression-testing harness for attention kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("attnprof {} (worker protocol {})",
                                                worker::build_version, worker::protocol_version));
  std::vector<std::pair<CLI::App*, cli::Action>> actions;
  for (const cli::Command& c : cli::commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    actions.emplace_back(sub, c.setup(*sub));
  }
  cli::one_value_per_occurrence(app);
  const std::optional<cli::AfterValue> after = cli::after_repeatable(app, argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    if (rc != 0 && after && std::string(e.what()).find(after->token) != std::string::npos)
      cli::print_repeat_hint(*after);
    return rc == 0 ? 0 : util::exit_bad_input;
  }
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const util::InputError& e) {
    bool named = false;
    for (const auto& d : e.diagnostics()) {
      fmt::print(stderr, "{}\n", d.to_string());
      named = named || (after && d.file == after->token && !cli::names_scenario(d.file));
    }
    if (named) cli::print_repeat_hint(*after);
    return util::exit_bad_input;
  } catch (const util::EnvironmentError& e) {
    fmt::print(stderr, "attnprof: {}\n", e.what());
    return util::exit_environment;
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnprof: internal error: {}\n", e.what());
    return util::exit_environment;
  } catch (...) {
    // Nothing may escape to the runtime (an abort with a core dump is no exit code a CI job
    // can read): whatever was thrown, exit 3 with one line.
    fmt::print(stderr, "attnprof: internal error: an exception of unknown type\n");
    return util::exit_environment;
  }
  return util::exit_bad_input;
}
