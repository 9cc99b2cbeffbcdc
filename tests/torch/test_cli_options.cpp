// Every option that collects values, on every subcommand of attnprof and on attnprof-worker,
// takes one value per occurrence (harness/cli/options.h): a positional after it stays a
// positional, in the `--opt value` and `--opt=value` forms and repeated. The options are read
// from each command's --help, so an option added later is checked without a line here.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/torch/cli_helpers.h"

using namespace clitest;

namespace {

const std::string plugin = ATTNPROF_TEST_PLUGIN;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The names listed under `section` ("Subcommands:", "Options:") of a CLI11 help text.
std::vector<std::string> listed(const std::string& help, const std::string& section) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& l : lines_of(help)) {
    if (l.empty() || l[0] != ' ') in = l == section;
    if (in && l.starts_with("  ") && l[2] != ' ') out.push_back(l.substr(2));
  }
  return out;
}

std::vector<std::string> subcommands(const std::string& help) {
  std::vector<std::string> out;
  for (const auto& l : listed(help, "Subcommands:")) out.push_back(l.substr(0, l.find(' ')));
  return out;
}

// An option line of the help: its long name (or short), and what its line says about it.
struct OptionLine {
  std::string name;
  bool collects = false;  // "TEXT (repeatable)", or CLI11's "TEXT ..." where the rule is missing
  bool required = false;
};

std::vector<OptionLine> options(const std::string& help) {
  std::vector<OptionLine> out;
  for (const auto& l : listed(help, "Options:")) {
    const std::string names = l.substr(0, l.find(' '));
    OptionLine o;
    for (std::size_t at = 0; at <= names.size();) {
      const std::size_t end = std::min(names.find(',', at), names.size());
      const std::string n = names.substr(at, end - at);
      if (o.name.empty() || n.starts_with("--")) o.name = n;
      at = end + 1;
    }
    o.collects =
        l.find(" (repeatable)") != std::string::npos || l.find(" ...") != std::string::npos;
    o.required = l.find(" REQUIRED") != std::string::npos;
    out.push_back(o);
  }
  return out;
}

// A value each option accepts, so that the command gets as far as its positionals.
std::string value_for(const std::string& option) {
  static const std::map<std::string, std::string> values{
      {"--case", "'*'"},
      {"--plugin", "'" + plugin + "'"},
      {"--base-arg", "--env=ATTNPROF_PROBE=1"},  // a worker option that may repeat
      {"--head-arg", "--env=ATTNPROF_PROBE=1"},
      {"--env", "ATTNPROF_PROBE=1"},
      {"--substitute", "cpu.naive=cpu.naive"},
      {"--run", "latest"},
      {"--base", "'" ATTNPROF_BINARY_DIR "'"},
      {"--output", "out.yaml"},
      {"--html", "r.html"},
      {"--scenario", "s.yaml"},  // package
      {"--arg", "base=1"},
  };
  auto it = values.find(option);
  if (it == values.end()) {
    FAIL_CHECK(option << ": give value_for() in tests/torch/test_cli_options.cpp a value it "
                         "accepts");
    return "x";
  }
  return it->second;
}

// The output without the hints, which name what the user typed (and so differ by form).
std::string without_notes(const std::string& out) {
  std::string kept;
  for (const auto& l : lines_of(out))
    if (!l.starts_with("note: ")) kept += l + "\n";
  return kept;
}

// `command` (the executable and its subcommand words, with the required options) is run with
// `option` given twice (`--opt=value --opt value`) before a positional, and once with the
// positional first, where no option can take it: both must end alike, with the positional read
// as one.
void check_positional_stays(const fs::path& dir, const std::string& command,
                            const std::string& option,
                            Result (*run)(const fs::path&, const std::string&)) {
  const std::string v = value_for(option), stray = "stray.yaml";
  const Result first = run(dir, command + " " + stray + " " + option + " " + v);
  INFO(command, " ", option, "\n", first.out);
  CHECK(first.rc == 2);  // bad input: no such file, or an argument the command does not take
  CHECK(first.out.find(stray) != std::string::npos);
  const std::string after = option + "=" + v + " " + option + " " + v + " " + stray;
  const Result r = run(dir, command + " " + after);
  INFO(after, "\n", r.out);
  CHECK(r.rc == first.rc);
  CHECK(without_notes(r.out) == without_notes(first.out));
}

}  // namespace

TEST_SUITE("cli.options") {
  TEST_CASE("every repeatable option of every subcommand leaves the positional after it alone") {
    TempDir d;
    std::vector<std::pair<std::string, std::string>> todo;  // (subcommand words, its help)
    for (const auto& s : subcommands(attnprof(d.path, "--help").out))
      todo.push_back({s, attnprof(d.path, s + " --help").out});
    std::vector<std::string> checked;
    for (std::size_t i = 0; i < todo.size(); ++i) {
      const auto [words, help] = todo[i];
      for (const auto& s : subcommands(help))  // baseline update
        todo.push_back({words + " " + s, attnprof(d.path, words + " " + s + " --help").out});
      std::string command = words;
      for (const auto& o : options(help))
        if (o.required) command += " " + o.name + " " + value_for(o.name);
      for (const auto& o : options(help))
        if (o.collects) {
          check_positional_stays(d.path, command, o.name, attnprof);
          checked.push_back(words + " " + o.name);
        }
    }
    // The help was read: the options the rule was written for are among those checked.
    INFO(doctest::toString(checked));
    for (const char* known :
         {"run --case", "run --plugin", "ab --base-arg", "ab --head-arg", "ab --env", "ab --case",
          "validate --plugin", "baseline update --run"})
      CHECK(std::find(checked.begin(), checked.end(), known) != checked.end());
  }

  TEST_CASE("attnprof-worker: a repeatable option takes one value; a second is no argument") {
    TempDir d;
    int checked = 0;
    for (const auto& o : options(worker(d.path, "--help").out))
      if (o.collects) {
        check_positional_stays(d.path, "", o.name, worker);
        ++checked;
      }
    CHECK(checked >= 3);  // --plugin, --env, --substitute
  }

  TEST_CASE("run --case GLOB FILE runs FILE's cases; --case repeats, in both forms") {
    TempDir d;
    d.write("my.yaml", R"(name: my
models:
  tiny: {heads: 2, kv_heads: 2, head_dim: 16, hidden: 32, max_positions: 512}
model: tiny
hardware: {device: cpu, threads: 1}
measure: {warmup: 2ms, min_samples: 10, max_samples: 20, max_noise: 50%, time_budget: 200ms}
workloads:
  - {name: w, batch: 1, seq_len: [16, 24, 32], kernels: [cpu.naive]}
)");
    Result r =
        attnprof(d.path, "run --db r.db --no-trace --case '*-s16-*' --case='*-s32-*' my.yaml");
    INFO(r.out);
    CHECK(r.rc == 0);
    CHECK(r.out.find("2 cases: 2 ok") != std::string::npos);
    CHECK(r.out.find("tiny/prefill/b1-s16-fp32-none/cpu.naive") != std::string::npos);
    CHECK(r.out.find("tiny/prefill/b1-s32-fp32-none/cpu.naive") != std::string::npos);
    CHECK(r.out.find("-s24-") == std::string::npos);
    CHECK(r.out.find("bert-base") == std::string::npos);  // not the built-in suite
  }

  TEST_CASE("a token after a repeatable option's value: the error says how to give two values") {
    TempDir d;
    Result globs = attnprof(d.path, "run --case 'a*' 'b*'");
    CHECK(globs.rc == 2);
    CHECK(globs.out ==
          "b*: cannot open file\n"
          "note: \"b*\" is not a second --case value: --case takes one value each time; to give "
          "two, repeat it: --case 'a*' --case 'b*'\n");
    Result runs = attnprof(d.path, "baseline update -o b.yaml --run=abc def");
    CHECK(runs.rc == 2);
    CHECK(runs.out.find("The following argument was not expected: def\n") != std::string::npos);
    CHECK(runs.out.find("note: \"def\" is not a second --run value: --run takes one value each "
                        "time; to give two, repeat it: --run abc --run def\n") !=
          std::string::npos);
    // A scenario file after --case's value is a scenario file: no hint.
    Result file = attnprof(d.path, "run --case 'a*' missing.yaml");
    CHECK(file.out == "missing.yaml: cannot open file\n");
  }
}
