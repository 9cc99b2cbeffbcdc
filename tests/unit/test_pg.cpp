// store::pg, what needs no server: the URL check, the URL as messages show it (no password,
// whatever its form), and the timeouts a connection gets.
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
  TEST_CASE("pg: passwords masked in a URL's query and in keyword/value strings") {
    using store::pg::masked;
    CHECK(masked("postgresql://ci:PW@[::1/fleet") == "postgresql://ci:***@[::1/fleet");
    CHECK(masked("postgresql://ci@h/db?sslmode=require&password=PW&x=1") ==
          "postgresql://ci@h/db?sslmode=require&password=***&x=1");
    CHECK(masked("host=db password=PW dbname=f") == "host=db password=*** dbname=f");
    CHECK(masked("host=db password = 'P W\\' x' user=u") == "host=db password = *** user=u");
    CHECK(masked("password=PW") == "password=***");
    CHECK(masked("host=db mypassword=x") == "host=db mypassword=x");  // another keyword
  }
  TEST_CASE("pg: a message quoting the connection string, or its password, shows neither") {
    using store::pg::redacted;
    const std::string url = "postgresql://ci:PW@[::1/fleet";
    CHECK(redacted("invalid IPv6 host address in URI: \"" + url + "\"", url) ==
          "invalid IPv6 host address in URI: \"postgresql://ci:***@[::1/fleet\"");
    CHECK(redacted("password \"PW\" refused", "host=h password='PW'") ==
          "password \"***\" refused");
    CHECK(redacted("nothing secret", "postgresql://h/db") == "nothing secret");
  }
  TEST_CASE("pg: a connection gets default timeouts, and the URL's own where it sets them" *
            doctest::skip(!store::pg::available())) {
    auto get = [](const store::pg::Settings& s, const std::string& key) {
      for (const auto& [k, v] : s.parameters)
        if (k == key) return v;
      return std::string("(absent)");
    };
    const auto d = store::pg::settings("postgresql://u:p@h/db");
    CHECK(get(d, "connect_timeout") == "10");
    CHECK(get(d, "options") == "-c statement_timeout=300000");
    CHECK(get(d, "password") == "p");
    CHECK(d.connect_timeout_s == 10);
    CHECK(d.statement_timeout_ms == 300000);
    const auto o = store::pg::settings(
        "postgresql://h/db?connect_timeout=3&options=-c%20statement_timeout%3D2s%20-c%20x%3Dy");
    CHECK(get(o, "connect_timeout") == "3");
    CHECK(get(o, "options") == "-c statement_timeout=2s -c x=y");
    CHECK(o.connect_timeout_s == 3);
    CHECK(o.statement_timeout_ms == 2000);
    // 0 turns the server's statement timeout off, and with it the client's bound.
    CHECK(store::pg::settings("postgresql://h/db?options=-c%20statement_timeout%3D0")
              .statement_timeout_ms == 0);
    const auto k = store::pg::settings("host=/tmp options='-c search_path=a'");
    CHECK(get(k, "options") == "-c search_path=a -c statement_timeout=300000");
    try {
      store::pg::settings("postgresql://ci:PW@[::1/fleet");
      FAIL("accepted");
    } catch (const util::InputError& e) {
      const std::string m = e.what();
      CHECK_MESSAGE(m.find("PW") == std::string::npos, m);
      CHECK(m.starts_with("postgresql://ci:***@[::1/fleet: "));
    }
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
    try {
      store::pg::check_url("host=db password=PW", "--to");
      FAIL("accepted");
    } catch (const util::InputError& e) {
      CHECK(e.diagnostics()[0].to_string() ==
            "--to: \"host=db password=***\" is not a PostgreSQL URL "
            "(postgresql://[user@]host[:port]/dbname)");
    }
  }
}
