// report::format and util::format_duration: durations, table alignment, one-line cells,
// wrapping, and tables too wide for the terminal.
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

  TEST_CASE("one_line folds line breaks and caps long text with an ellipsis") {
    CHECK(report::one_line("a\n  b\r\n\tc  ") == "a b c");
    CHECK(report::one_line("abcdefghij", 5) == "abcd…");
    CHECK(report::one_line("±±±±±±", 4) == "±±±…");  // counts columns, not bytes
    CHECK(report::one_line(std::string(500, 'x'), 0).size() == 500);
  }

  TEST_CASE("wrap breaks after separators, else mid-word") {
    CHECK(report::wrap("llama-2-7b/prefill/b1-s512", 12) ==
          std::vector<std::string>{"llama-2-7b/", "prefill/b1-", "s512"});
    CHECK(report::wrap("abcdefghijklmnop", 8) == std::vector<std::string>{"abcdefgh", "ijklmnop"});
  }

  TEST_CASE("a table too wide moves its detail column under each row and wraps its key") {
    report::Table t({"case", "verdict", "reason"});
    t.set_wrap(0);
    t.set_detail(2);
    t.add({"suite/workload/b1-s128-fp32-none/sdpa.math", "failed", "line one\nline two"});
    t.add({"s/w/b1/eager", "ok", ""});
    CHECK(t.render(0) ==
          "case                                        verdict  reason\n"
          "----------------------------------------------------------------------\n"
          "suite/workload/b1-s128-fp32-none/sdpa.math  failed   line one line two\n"
          "s/w/b1/eager                                ok\n");
    CHECK(t.render(40) ==
          "case                             verdict\n"
          "----------------------------------------\n"
          "suite/workload/b1-s128-fp32-     failed\n"
          "none/sdpa.math\n"
          "    line one line two\n"
          "s/w/b1/eager                     ok\n");
  }

  TEST_CASE("markdown: one line per row, pipes and tags escaped") {
    report::Table t({"a", "b"});
    t.add({"x|y", "1\n<b>2</b>"});
    CHECK(t.render_markdown() == "| a | b |\n|---|---|\n| x\\|y | 1 &lt;b>2&lt;/b> |\n");
  }
}
