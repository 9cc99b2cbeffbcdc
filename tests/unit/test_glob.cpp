// The one rule for what a case-key glob may be (util/glob.h): every set of characters closed,
// where both matchers (fnmatch, SQLite's GLOB) read it alike.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include "harness/util/glob.h"

using attnprof::util::glob_match;
using attnprof::util::glob_problem;

TEST_SUITE("util::glob") {
  TEST_CASE("an unclosed \"[\" is refused at its character; closed sets are globs") {
    for (const char* bad : {"[", "bert/[ab", "[]", "[!]", "[^]", "a[b]c[", "[[]["}) {
      CAPTURE(bad);
      CHECK(glob_problem(bad).has_value());
    }
    CHECK(glob_problem("[")->at == 1);
    CHECK(glob_problem("bert/[ab")->at == 6);
    CHECK(glob_problem("a[b]c[")->at == 6);
    CHECK(glob_problem("[[][")->at == 4);
    for (const char* good :
         {"*", "bert/*", "?", "[ab]x", "[]]", "[!]]", "[^a]", "[[]", "a]b", ""}) {
      CAPTURE(good);
      CHECK_FALSE(glob_problem(good).has_value());
    }
    CHECK(attnprof::util::describe("x[", *glob_problem("x[")) ==
          "\"x[\" is not a glob: the \"[\" at character 2 opens a set of characters that no \"]\" "
          "closes (to match \"[\" itself, write \"[[]\")");
  }

  TEST_CASE("what the rule lets through, fnmatch and SQLite's GLOB match alike") {
    // The two matchers of the store and the gate; the unclosed "[" is where they part.
    auto both = [](const char* glob, const char* text) {
      const bool f = glob_match(glob, text), s = sqlite3_strglob(glob, text) == 0;
      CHECK_MESSAGE(f == s, glob, " on ", text);
      return f;
    };
    CHECK(both("[[]x", "[x"));
    CHECK(both("m/[ab]/k", "m/a/k"));
    CHECK_FALSE(both("m/[^ab]/k", "m/a/k"));
    CHECK(both("[]]", "]"));
    CHECK(glob_match("[", "["));            // fnmatch: the character itself
    CHECK(sqlite3_strglob("[", "[") != 0);  // SQLite: a set that matches nothing
  }
}
