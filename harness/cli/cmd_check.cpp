// attnprof check: the whole-file check that other commands leave out (they read what they
// answer, not every page): PRAGMA quick_check, or integrity_check with --full, the stored
// environments, and every row against the schema's constraints and JSON columns. Exit 0 when
// sound, 3 when damaged, naming the file and SQLite's first message or the row.
#include <fmt/format.h>

#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/open_history.h"
#include "harness/store/database.h"

namespace attnprof::cli {

Action setup_check(CLI::App& sub) {
  struct Opts {
    std::string db;
    bool full = false;
  };
  auto o = std::make_shared<Opts>();
  add_db_option(sub, o->db);
  sub.add_flag("--full", o->full,
               "PRAGMA integrity_check (indexes against their tables too) instead of quick_check");
  return [o] {
    auto db = open_history(o->db, store::Database::Mode::read_only);
    db.check(o->full ? store::Database::Check::full : store::Database::Check::quick);
    fmt::print("{}: ok ({} found no damage; schema version {}, {} runs)\n", o->db,
               o->full ? "integrity_check" : "quick_check", db.opened_at_version(),
               db.connection().scalar_int("SELECT count(*) FROM runs"));
    return 0;
  };
}

}  // namespace attnprof::cli
