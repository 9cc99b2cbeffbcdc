// attnprof migrate: a history at an older schema version brought to this one, in place, once.
// Until then every read upgrades a copy of it in memory (the note those reads print), since a
// read never writes the file (docs/usage.md, "Commands"). Every page is checked first, then the
// migrations run in one transaction: exit 0 migrated (or nothing to do), 3 when the file is
// damaged, newer, not a history, read-only or locked, and then it is left as it was.
#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/store/database.h"
#include "harness/store/schema.h"
#include "harness/util/format.h"

namespace attnprof::cli {

Action setup_migrate(CLI::App& sub) {
  auto db = std::make_shared<std::string>();
  add_db_option(sub, *db);
  return [db] {
    const auto start = std::chrono::steady_clock::now();
    const int was = store::Database::migrate_in_place(*db);
    const std::chrono::nanoseconds took = std::chrono::steady_clock::now() - start;
    if (was == store::schema::current_version)
      fmt::print("{}: already at schema version {}; nothing to migrate\n", *db, was);
    else
      fmt::print("{}: migrated from schema version {} to {} in {} (every page checked first)\n",
                 *db, was, store::schema::current_version,
                 util::format_duration(static_cast<double>(took.count())));
    return 0;
  };
}

}  // namespace attnprof::cli
