// attnprof show RUN: a stored run (latest, an id or a unique prefix): its header, its cases, its
// verdicts and annotations, and with --case the cost matrix of each matching case with its
// summary (what the case ran, its accuracy, its memory figures).
#include <fmt/format.h>
#include <sqlite3.h>

#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/report/results.h"
#include "harness/store/database.h"
#include "harness/store/render.h"
#include "harness/util/error.h"
#include "harness/util/table.h"

namespace attnprof::cli {

Action setup_show(CLI::App& sub) {
  struct Opts {
    std::string db, run = "latest", case_glob, sort;
    int rows = 0;
    bool wide = false;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  sub.add_option("run", o->run, "latest (default), a run id or a unique prefix of one");
  sub.add_option("--case", o->case_glob, "Print the cost matrix of the cases matching this glob")
      ->check(glob_check());
  sub.add_option("--sort", o->sort,
                 "Cost-matrix column to sort by: cpu_self, cpu_total, device_self, device_total, "
                 "calls, bytes, share, launches, name, or torch's names (default: device self "
                 "time on a GPU, else CPU self time)");
  sub.add_option("--rows", o->rows, "Cost-matrix rows to show (default: all)");
  add_wide_option(sub, o->wide);
  return [o] {
    auto db = open_history(o->db, store::Database::Mode::read_only);
    auto run = db.load_run(o->run);
    if (!run)
      throw util::InputError(util::Diagnostic{
          o->db, 0, 0, fmt::format("no run \"{}\" (try `attnprof history` for ids)", o->run)});
    // The cases as `run` printed them: a busy machine's and an unchecked figure say so here too.
    fmt::print("{}\n{}{}\n", store::format_run_header(*run),
               report::results_table(*run, table_width(o->wide)), report::status_counts(*run, table_width(o->wide)));
    if (!run->pair_id.empty())
      fmt::print("A/B pair {} ({} side); judge it again: attnprof compare --pair {}\n",
                 run->pair_id, run->side, run->pair_id.substr(0, 8));
    auto verdicts = db.verdicts(run->id);
    if (!verdicts.empty()) {
      util::Table t({"case", "verdict", "ratio", "detail"});
      t.set_key(0);
      t.set_detail(3);
      for (const auto& v : verdicts)
        t.add({v.case_key, v.verdict, v.ratio ? fmt::format("{:.3f}x", *v.ratio) : "", v.detail});
      fmt::print("\nverdicts\n{}", t.render(table_width(o->wide)));
    }
    for (const auto& a : db.annotations(run->id))
      fmt::print("\nannotation: {} {} by {}: {}\n", store::to_string(a.kind), a.case_glob, a.author,
                 a.reason);
    if (o->case_glob.empty()) return 0;
    int shown = 0;
    for (const auto& c : run->cases) {
      if (sqlite3_strglob(o->case_glob.c_str(), c.spec.key.c_str()) != 0) continue;
      fmt::print("{}", case_cost_text(c, o->sort, o->rows, table_width(o->wide)));
      ++shown;
    }
    if (shown == 0)
      throw util::InputError(util::Diagnostic{
          "--case", 0, 0,
          fmt::format("no case of run {} matches \"{}\"", run->id.substr(0, 8), o->case_glob)});
    return 0;
  };
}

}  // namespace attnprof::cli
