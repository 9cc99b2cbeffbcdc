// attnprof merge A.db B.db... -o history.db: fold sharded CI results into one history. Runs are
// keyed by id, so merging a shard twice adds its runs once.
#include <fmt/format.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {

Action setup_merge(CLI::App& sub) {
  struct Opts {
    std::vector<std::string> inputs;
    std::string output;
  };
  auto o = std::make_shared<Opts>();
  sub.add_option("inputs", o->inputs, "Databases to fold in")->required();
  sub.add_option("-o,--output", o->output, "The history to fold them into (created if absent)")
      ->required();
  return [o] {
    // Every input must exist before the output is created: a typo leaves no empty history.
    std::vector<util::Diagnostic> missing;
    for (const auto& in : o->inputs)
      if (access(in.c_str(), R_OK) != 0) missing.push_back({in, 0, 0, "cannot read this database"});
    if (!missing.empty()) throw util::InputError(missing);
    // Every page of every input read before the output is opened: a damaged input leaves the
    // output as it was (not migrated, not switched to WAL, not created).
    std::vector<store::Database> inputs;
    for (const auto& in : o->inputs) {
      inputs.push_back(open_history(in, store::Database::Mode::read_only));
      inputs.back().check();
    }
    auto out = open_history(o->output);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      auto s = out.merge_from(inputs[i]);
      fmt::print(
          "{}: {} runs added, {} already present, {} verdicts, {} annotations, {} A/B pairs' "
          "rounds\n",
          o->inputs[i], s.runs_added, s.runs_present, s.verdicts_added, s.annotations_added,
          s.ab_pairs);
    }
    return 0;
  };
}

}  // namespace attnprof::cli
