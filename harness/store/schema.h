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
inline constexpr int current_version = 10;

}  // namespace attnprof::store::schema
