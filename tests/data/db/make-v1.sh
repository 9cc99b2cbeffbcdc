#!/bin/sh
# Rebuilds v1.db: the v1 DDL exactly as harness/store/schema.cpp keeps it, plus v1-data.sql.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rm -f "$here/v1.db"
{
  sed -n '/constexpr const char\* v1 = R"sql(/,/^)sql";/p' "$here/../../../harness/store/schema.cpp" |
    sed '1d;$d'
  cat "$here/v1-data.sql"
  echo "PRAGMA user_version = 1;"
} | sqlite3 "$here/v1.db"
