// What the database_*.cpp files share to read a runs row into a RunInfo (not for other stages).
#pragma once

#include "harness/store/database.h"
#include "harness/store/sqlite.h"

namespace attnprof::store {

// The columns read_run_info reads, in its order, for a query over `runs r`.
extern const char* const kRunColumns;

RunInfo read_run_info(const sql::Statement& st);

}  // namespace attnprof::store
