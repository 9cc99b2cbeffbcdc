// What the database_*.cpp files share to read stored rows (not for other stages): a runs row
// into a RunInfo, and a JSON column whose damage names the database, table, row and column.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "harness/store/database.h"
#include "harness/store/sqlite.h"
#include "harness/util/error.h"

namespace attnprof::store {

// The columns read_run_info reads, in its order, for a query over `runs r`.
extern const char* const kRunColumns;

RunInfo read_run_info(const sql::Statement& st);

// A stored row that cannot be read: "<path>: table T, ROW: column C cannot be read (REASON);
// the history is damaged: ..." (exit 3), for readers and the whole-file check alike.
util::EnvironmentError damaged_row(const sql::Connection& db, std::string_view table,
                                   std::string_view row, std::string_view column,
                                   std::string_view reason);

// An environments row's fields column read back; util::EnvironmentError "<path>: table
// environments, fingerprint F: column fields cannot be read (...)" when it is damaged.
std::map<std::string, std::string> environment_fields(const sql::Connection& db,
                                                      std::string_view fingerprint,
                                                      std::string_view fields);

}  // namespace attnprof::store
