#include <doctest/doctest.h>

#include "harness/report/format.h"
#include "harness/util/format.h"

using namespace attnprof;

TEST_SUITE("report::format") {
  TEST_CASE("durations keep three significant figures with fixed units") {
    CHECK(util::format_duration(812) == "812 ns");
    CHECK(util::format_duration(12345) == "12.3 us");
    CHECK(util::format_duration(4.56e6) == "4.56 ms");
    CHECK(util::format_duration(123.4e6) == "123 ms");
    CHECK(util::format_duration(1.234e9) == "1.23 s");
    CHECK(util::format_duration(999.96e3) == "1.00 ms");
    CHECK(util::format_duration(-2500) == "-2.50 us");
  }

  TEST_CASE("numbers align right, text left, the last column unpadded") {
    report::Table t({"case", "median", "note"});
    t.add({"a", "1.5 ms", "3.0x slower than before"});
    t.add({"longer", "12.25 us", "ok"});
    CHECK(t.render() ==
          "case    median    note\n"
          "-----------------------------------------\n"
          "a         1.5 ms  3.0x slower than before\n"
          "longer  12.25 us  ok\n");
  }

  TEST_CASE("markdown escapes pipes") {
    report::Table t({"a", "b"});
    t.add({"x|y", "1"});
    CHECK(t.render_markdown() == "| a | b |\n|---|---|\n| x\\|y | 1 |\n");
  }
}
