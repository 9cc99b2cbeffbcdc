// attnprof report --html FILE: a self-contained HTML report of a stored run (its results, a
// roofline against the device's peaks, each case's cost matrix), or with --case KEY|GLOB of the
// history of each matching case (medians and intervals over runs, change points, annotations).
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/report/html.h"
#include "harness/report/publish.h"
#include "harness/store/database.h"
#include "harness/util/error.h"

namespace attnprof::cli {

Action setup_report(CLI::App& sub) {
  struct Opts {
    std::string db, run = "latest", case_key, branch, env, html;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  sub.add_option("--html", o->html, "The HTML file to write (one file, no network needed)")
      ->required();
  sub.add_option("--run", o->run, "Run to report: latest, an id or a unique id prefix")
      ->capture_default_str();
  sub.add_option("--case", o->case_key,
                 "Report the history of this case, or of every case this glob matches (at most "
                 "50), instead of a run: medians over runs, change points and annotations")
      ->check(glob_check());
  sub.add_option("--branch", o->branch, "With --case: only runs of this branch");
  sub.add_option("--env", o->env,
                 "With --case: environment fingerprint (prefix; default: the newest run's)");
  return [o] {
    if (!std::filesystem::exists(o->db))
      throw util::InputError(util::Diagnostic{
          "--db", 0, 0, fmt::format("no database at {}; run `attnprof run` first", o->db)});
    auto db = open_history(o->db, store::Database::Mode::read_only);
    std::string what;
    if (!o->case_key.empty()) {
      const std::vector<store::CaseHistory> cases =
          store::case_histories(db, o->case_key, o->branch, o->env);
      report::write_file(o->html, report::html_history(cases, o->case_key));
      for (const auto& h : cases)
        what += fmt::format("{}history of {} ({} runs, {} change points)",
                            what.empty() ? "" : "\n  ", h.key, h.points.size(), h.changes.size());
    } else {
      auto run = db.load_run(o->run);
      if (!run)
        throw util::InputError(
            util::Diagnostic{"--run", 0, 0, fmt::format("no run \"{}\" in {}", o->run, o->db)});
      report::write_file(o->html, report::html_run(*run));
      what = fmt::format("run {} ({} cases)", run->id, run->cases.size());
    }
    fmt::print("{}: {}\n", o->html, what);
    return 0;
  };
}

}  // namespace attnprof::cli
