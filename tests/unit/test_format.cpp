// report::format, util::table and util::format: durations, sizes, table alignment, one-line
// cells, wrapping, tables too wide for the terminal, and how wide it is.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

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

  TEST_CASE("a table too wide moves its detail column under each row, then leaves columns out") {
    report::Table t({"case", "verdict", "median", "samples", "reason"});
    t.set_key(0);
    t.set_detail(4);
    t.set_drop_order({3, 2});
    t.add({"suite/w/b1-s128-fp32-none/sdpa.math", "failed", "1.50 ms", "30", "line one\nline two"});
    t.add({"s/w/b1/eager", "ok", "812 ns", "40", ""});
    CHECK(t.render(0) ==
          "case                                 verdict  median   samples  reason\n"
          "---------------------------------------------------------------------------------\n"
          "suite/w/b1-s128-fp32-none/sdpa.math  failed   1.50 ms       30  line one line two\n"
          "s/w/b1/eager                         ok        812 ns       40\n");
    CHECK(t.render(70) ==
          "case                                 verdict  median   samples\n"
          "--------------------------------------------------------------\n"
          "suite/w/b1-s128-fp32-none/sdpa.math  failed   1.50 ms       30\n"
          "    line one line two\n"
          "s/w/b1/eager                         ok        812 ns       40\n");
    CHECK(t.render(60) ==
          "case                                 verdict  median\n"
          "-----------------------------------------------------\n"
          "suite/w/b1-s128-fp32-none/sdpa.math  failed   1.50 ms\n"
          "    line one line two\n"
          "s/w/b1/eager                         ok        812 ns\n"
          "(left out to fit 60 columns: samples; --wide prints them)\n");
  }

  TEST_CASE("a detail under its row is wrapped whole, not cut at a cell's cap") {
    // A gate's reason runs past kCellCap; its end ("but unstable: ...") is what a reader needs.
    const std::string reason = std::string(150, 'r') + " but unstable: descheduled in 100% of " +
                               "samples; load 6.1 on 2 cores";
    report::Table t({"case", "verdict", "reason"});
    t.set_key(0);
    t.set_detail(2);
    t.add({"s/w/b1/eager", "inconclusive", reason});
    CHECK(t.render(80) ==
          "case          verdict\n"
          "--------------------------\n"
          "s/w/b1/eager  inconclusive\n"
          "    " +
              std::string(76, 'r') +
              "\n"
              "    " +
              std::string(74, 'r') +
              "\n"
              "    but unstable: descheduled in 100% of samples; load 6.1 on 2 cores\n");
    t.add({"s/w/b1/math", "failed", std::string(2000, 'e')});
    const std::string long_error = t.render(80);
    CHECK(long_error.find("…\n") != std::string::npos);  // a torch error is still capped
    CHECK(long_error.size() < 1200);
  }

  TEST_CASE("a key too long for the width goes whole on its own line, never split") {
    report::Table t({"case", "verdict", "median"});
    t.set_key(0);
    t.set_drop_order({2});
    t.add({"bert-base/prefill/b1-s128-fp32-none/op:my_ns::attention", "ok", "1.50 ms"});
    t.add({"s/w/b1/eager", "ok", "812 ns"});
    CHECK(t.render(40) ==
          "case                             verdict\n"
          "----------------------------------------\n"
          "bert-base/prefill/b1-s128-fp32-none/op:my_ns::attention\n"
          "                                 ok\n"
          "s/w/b1/eager                     ok\n"
          "(left out to fit 40 columns: median;\n"
          "--wide prints them)\n");
  }

  TEST_CASE("columns_that_fit leaves out in order, only what it must") {
    CHECK(util::columns_that_fit({10, 10, 10}, {2, 1}, 2, 0) == std::vector<bool>{1, 1, 1});
    CHECK(util::columns_that_fit({10, 10, 10}, {2, 1}, 2, 34) == std::vector<bool>{1, 1, 1});
    CHECK(util::columns_that_fit({10, 10, 10}, {2, 1}, 2, 33) == std::vector<bool>{1, 1, 0});
    CHECK(util::columns_that_fit({10, 10, 10}, {2, 1}, 2, 5) == std::vector<bool>{1, 0, 0});
    // The wide column left out last makes room for the narrow one left out first.
    CHECK(util::columns_that_fit({10, 30, 5}, {2, 1}, 2, 22) == std::vector<bool>{1, 0, 1});
  }

  TEST_CASE("the console's width: COLUMNS, else 120 off a terminal") {
    const char* had = std::getenv("COLUMNS");
    const std::string saved = had ? had : "";
    setenv("COLUMNS", "80", 1);
    CHECK(report::console_width(-1) == 80);
    setenv("COLUMNS", "12", 1);  // too narrow to be meant: ignored
    CHECK(report::console_width(-1) == 120);
    setenv("COLUMNS", "wide", 1);
    CHECK(report::console_width(-1) == 120);
    unsetenv("COLUMNS");
    CHECK(report::console_width(-1) == 120);
    if (had) setenv("COLUMNS", saved.c_str(), 1);
  }

  TEST_CASE("sizes: one formatter, binary units") {
    CHECK(util::format_bytes(512) == "512 B");
    CHECK(util::format_bytes(393216) == "384.00 KiB");
    CHECK(util::format_bytes(-3 * 1024.0 * 1024) == "-3.00 MiB");
    CHECK(util::format_bytes(1.25 * 1024 * 1024 * 1024) == "1.25 GiB");
  }

  TEST_CASE("markdown: one line per row, pipes and tags escaped") {
    report::Table t({"a", "b"});
    t.add({"x|y", "1\n<b>2</b>"});
    CHECK(t.render_markdown() == "| a | b |\n|---|---|\n| x\\|y | 1 &lt;b>2&lt;/b> |\n");
  }
}
