// attnprof baseline update: write or refresh a baseline file from a stored run (its summaries
// and samples), e.g. after an intended performance change has been reviewed.
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/gate/baseline.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {

Action setup_baseline(CLI::App& sub) {
  struct Args {
    std::string db, run = "latest", output, hardware;
  };
  auto a = std::make_shared<Args>();
  sub.require_subcommand(1);
  CLI::App* update = sub.add_subcommand("update", "Write a baseline file from a stored run");
  add_db_option(*update, a->db);
  update->add_option("--run", a->run, "Run to take: latest, an id or a unique id prefix");
  update->add_option("--output,-o", a->output, "Baseline file to write")->required();
  update->add_option("--hardware", a->hardware,
                     "Hardware name recorded in the file (default: the run's device)");
  return [a] {
    store::Database db = store::Database::open(a->db, store::Database::Mode::read_only);
    std::optional<core::Run> run = db.load_run(a->run);
    if (!run)
      throw util::InputError(
          util::Diagnostic{"--run", 0, 0, fmt::format("no run \"{}\" in {}", a->run, a->db)});
    std::string hw = a->hardware;
    if (hw.empty()) {
      auto it = run->env.fields.find("device.name");
      hw = it != run->env.fields.end() ? it->second : "unknown";
    }
    gate::write_baseline(a->output, *run, {.hardware = hw});
    int ok = 0;
    for (const auto& c : run->cases) ok += c.status == core::CaseStatus::ok;
    fmt::print("baseline {} written from run {}: {} case(s)\n", a->output, run->id, ok);
    return 0;
  };
}

}  // namespace attnprof::cli
