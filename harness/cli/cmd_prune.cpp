// attnprof prune: retention. A run goes when it is beyond the newest N of its branch
// (--keep-last) and/or older than D days (--older-than), all given conditions together; runs
// named by an annotation always stay.
#include <fmt/format.h>

#include <memory>

#include "harness/cli/bounds.h"
#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/core/clock.h"
#include "harness/store/database.h"
#include "harness/store/render.h"

namespace attnprof::cli {

Action setup_prune(CLI::App& sub) {
  struct Opts {
    std::string db;
    std::optional<int> keep_last;
    std::optional<double> older_than_days;
    bool dry_run = false, vacuum = false;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  sub.add_option("--keep-last", o->keep_last, "Keep the newest N runs of each branch");
  sub.add_option("--older-than", o->older_than_days, "Prune only runs older than D days")
      ->check(bound(
          Range{.hi = kMaxDaysBack, .what = "a number of days", .hi_why = "(the clock's range)"}));
  sub.add_flag("--dry-run", o->dry_run, "List what would go; change nothing");
  sub.add_flag("--vacuum", o->vacuum, "Give the freed space back to the file system");
  return [o] {
    store::PrunePolicy p;
    p.keep_last = o->keep_last;
    if (o->older_than_days) {
      const auto now = core::epoch_ns();
      p.older_than_ns = now - static_cast<std::int64_t>(*o->older_than_days * 86400e9);
    }
    p.dry_run = o->dry_run;
    auto db = open_history(
        o->db, o->dry_run ? store::Database::Mode::read_only : store::Database::Mode::read_write);
    auto runs = db.prune(p);
    for (const auto& r : runs)
      fmt::print("{} {}  {}  {}  {}\n", o->dry_run ? "would prune" : "pruned", r.id,
                 store::format_time(r.started_ns), r.git_branch, r.git_commit.substr(0, 12));
    fmt::print("{} {} runs\n", o->dry_run ? "would prune" : "pruned", runs.size());
    if (o->vacuum && !o->dry_run) db.vacuum();
    return 0;
  };
}

}  // namespace attnprof::cli
