// How every subcommand opens a history: store::Database::open, and, when a read had to upgrade
// an older schema in a copy in memory, one note on stderr saying what that cost and the command
// that ends it.
#pragma once

#include <string>

#include "harness/store/database.h"

namespace attnprof::cli {

store::Database open_history(const std::string& path,
                             store::Database::Mode mode = store::Database::Mode::read_write);

// The note: "attnprof: note: PATH is at schema version N (this attnprof's is M): this read
// upgraded a copy in memory (1.61 s, 550.00 MiB), as every read will until `attnprof migrate
// --db PATH` upgrades the file once".
std::string upgraded_copy_note(const std::string& path, const store::Database::UpgradedCopy& c);

}  // namespace attnprof::cli
