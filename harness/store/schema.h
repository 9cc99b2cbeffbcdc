// The history schema as a chain of migrations. Version N is what PRAGMA user_version holds after
// migration N ran; a new database runs the whole chain, so the historical DDL is exercised by
// every test, and tests/data/db/ holds databases made at each earlier version.
// Never edit a migration that has shipped: add one.
#pragma once

#include <span>

namespace attnprof::store::schema {

struct Migration {
  int version;       // user_version after it ran
  const char* what;  // one line, for messages
  const char* sql;
};

std::span<const Migration> migrations();
inline constexpr int current_version = 12;

// The tables and columns of a database, in order: (table name, column name) rows.
inline constexpr const char* layout_query =
    "SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p "
    "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid";

// One table of one version: its columns in order, comma-separated.
struct TableLayout {
  int version;
  const char* table;
  const char* columns;
};

// Every version's tables: what the migration chain up to that version makes of an empty
// database (layout_query), recorded at build time by schema_layouts_gen.cpp. An open compares a
// file with it instead of running the chain, which costs 2-3 ms of every command (each ALTER
// TABLE makes SQLite parse the whole schema again).
std::span<const TableLayout> layouts();

}  // namespace attnprof::store::schema
