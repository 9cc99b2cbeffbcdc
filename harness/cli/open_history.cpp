// The one way subcommands open a history (open_history.h).
#include "harness/cli/open_history.h"

#include <fmt/format.h>

#include <cstdio>

#include "harness/store/schema.h"
#include "harness/util/format.h"

namespace attnprof::cli {

std::string upgraded_copy_note(const std::string& path, const store::Database::UpgradedCopy& c) {
  return fmt::format(
      "attnprof: note: {} is at schema version {} (this attnprof's is {}): this read upgraded a "
      "copy in memory ({}, {}), as every read will until `attnprof migrate --db {}` upgrades the "
      "file once",
      path, c.from_version, store::schema::current_version,
      util::format_duration(static_cast<double>(c.took.count())),
      util::format_bytes(static_cast<double>(c.peak_bytes)), path);
}

store::Database open_history(const std::string& path, store::Database::Mode mode) {
  store::Database db = store::Database::open(path, mode);
  if (db.upgraded_copy()) fmt::print(stderr, "{}\n", upgraded_copy_note(path, *db.upgraded_copy()));
  return db;
}

}  // namespace attnprof::cli
