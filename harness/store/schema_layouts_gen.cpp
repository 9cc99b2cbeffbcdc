// Build-time generator of schema_layouts.cpp: runs the migration chain (schema.cpp) on an empty
// in-memory database, version by version, and writes each version's tables and columns
// (schema::layouts()) as C++, so that opening a history needs no run of the chain.
//   attnprof_schema_layouts OUT.cpp
#include <sqlite3.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "harness/store/schema.h"

namespace {

using namespace attnprof::store;

bool fail(sqlite3* db, const std::string& what) {
  std::fprintf(stderr, "attnprof_schema_layouts: %s: %s\n", what.c_str(), sqlite3_errmsg(db));
  return false;
}

// This version's {version, "table", "a,b,c"}, lines of the generated array.
bool append_layout(sqlite3* db, int version, std::ostringstream& out) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, schema::layout_query, -1, &st, nullptr) != SQLITE_OK)
    return fail(db, "layout query");
  std::string table, columns;
  auto flush = [&] {
    if (!table.empty())
      out << "    {" << version << ", \"" << table << "\", \"" << columns << "\"},\n";
  };
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const std::string t = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    const std::string c = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    if (t != table) {
      flush();
      table = t;
      columns.clear();
    }
    columns += (columns.empty() ? "" : ",") + c;
  }
  flush();
  sqlite3_finalize(st);
  return rc == SQLITE_DONE || fail(db, "layout query");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: attnprof_schema_layouts OUT.cpp\n");
    return 2;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
    fail(db, "sqlite3_open");
    return 3;
  }
  std::ostringstream rows;
  for (const auto& m : schema::migrations()) {
    char* err = nullptr;
    if (sqlite3_exec(db, m.sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::fprintf(stderr, "attnprof_schema_layouts: migration %d: %s\n", m.version, err);
      return 3;
    }
    if (!append_layout(db, m.version, rows)) return 3;
  }
  sqlite3_close(db);
  std::ofstream out(argv[1]);
  out << "// Generated at build time by attnprof_schema_layouts (schema_layouts_gen.cpp) from the\n"
         "// migration chain: every version's tables and their columns. Do not edit.\n"
         "#include \"harness/store/schema.h\"\n\n"
         "namespace attnprof::store::schema {\n\n"
         "std::span<const TableLayout> layouts() {\n"
         "  static constexpr TableLayout all[] = {\n"
      << rows.str()
      << "  };\n"
         "  return all;\n"
         "}\n\n"
         "}  // namespace attnprof::store::schema\n";
  return out.good() ? 0 : 3;
}
