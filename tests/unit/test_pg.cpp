// store::pg, what needs no server: the URL check and the URL as messages show it (no password).
// The server itself is tested end to end in tests/ci/postgres.sh.
#include <doctest/doctest.h>

#include <string>

#include "harness/store/pg.h"

using namespace attnprof;

TEST_SUITE("store::pg") {
  TEST_CASE("pg: a URL's password is masked wherever the URL is shown") {
    using store::pg::masked;
    CHECK(masked("postgresql://ci:s3cr:et@db.example:5432/hist") ==
          "postgresql://ci:***@db.example:5432/hist");
    CHECK(masked("postgresql://ci@db.example/hist") == "postgresql://ci@db.example/hist");
    CHECK(masked("postgresql:///hist?host=/tmp/s&user=a") ==
          "postgresql:///hist?host=/tmp/s&user=a");
    // An "@" in the path or query is no userinfo.
    CHECK(masked("postgres://h/db?options=a:b@c") == "postgres://h/db?options=a:b@c");
    CHECK(masked("postgres://u:p@h") == "postgres://u:***@h");
  }
  TEST_CASE(
      "pg: only postgresql:// and postgres:// URLs are servers, else bad input naming the option") {
    CHECK_NOTHROW(store::pg::check_url("postgresql://h/db", "--to"));
    CHECK_NOTHROW(store::pg::check_url("postgres://h/db", "--to"));
    try {
      store::pg::check_url("mysql://u:pw@h/db", "--from");
      FAIL("accepted");
    } catch (const util::InputError& e) {
      REQUIRE(e.diagnostics().size() == 1);
      CHECK(e.diagnostics()[0].to_string() ==
            "--from: \"mysql://u:***@h/db\" is not a PostgreSQL URL "
            "(postgresql://[user@]host[:port]/dbname)");
    }
  }
}
