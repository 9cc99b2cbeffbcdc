// report::Progress: plain lines off a terminal, the live line on one, and the ETA's format.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "harness/report/progress.h"

using namespace attnprof;

namespace {

// What a Progress wrote, through a memory FILE.
struct Captured {
  char* buf = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&buf, &size);
  ~Captured() {
    if (f) std::fclose(f);
    std::free(buf);
  }
  std::string text() {
    std::fflush(f);
    return std::string(buf, size);
  }
};

}  // namespace

TEST_SUITE("report::Progress") {
  TEST_CASE("not a terminal: one plain line per finished case, no control characters") {
    Captured out;
    double now = 0;
    {
      report::Progress p(3, out.f, 0, 0, [&] { return now; });
      p.start("m/prefill/b1/eager");
      now = 2;
      p.finish("m/prefill/b1/eager", "ok 1.23 ms");
      p.start("m/prefill/b2/eager");
      p.message("warning: something\n");
      now = 4;
      p.finish("m/prefill/b2/eager", "failed: max error 0.3\nat [0, 1, 2]");
      CHECK(p.eta() == "ETA 2 s");
    }
    CHECK(out.text() ==
          "[1/3] m/prefill/b1/eager: ok 1.23 ms\n"
          "warning: something\n"
          "[2/3] m/prefill/b2/eager: failed: max error 0.3 at [0, 1, 2]\n");
  }

  TEST_CASE("a terminal: the live line is rewritten in place, cut to the width, and cleared") {
    Captured out;
    double now = 0;
    report::Progress p(4, out.f, 1, 60, [&] { return now; });
    p.start("a/b");
    CHECK(out.text() == "\r\033[K[0/4 0%] a/b  0 ms");
    now = 10;
    p.finish("a/b", "ok");
    const std::string long_key = "llama-2-7b/prefill/b4-s4096-bf16-causal/sdpa.flash";
    p.start(long_key);
    now = 12;
    p.message("note");
    const std::string text = out.text();
    // The finished case's line replaced the live one; the new live line keeps the key's end
    // and the ETA from the time so far (12 s for one case, 3 left).
    CHECK(text.find("\r\033[K[1/4] a/b: ok\n") != std::string::npos);
    CHECK(text.find("\r\033[Knote\n") != std::string::npos);
    const std::string last = text.substr(text.rfind("\r\033[K") + 4);
    CHECK(last.size() <= 60 + 2);  // "…" is 3 bytes, 1 column
    CHECK(last.find("ETA 36 s") != std::string::npos);
    CHECK(last.find("bf16-causal/sdpa.flash") != std::string::npos);
    p.done();
    CHECK(out.text().substr(out.text().size() - 4) == "\r\033[K");
  }

  TEST_CASE("ETA formats for people") {
    CHECK(report::format_eta(0.25) == "250 ms");
    CHECK(report::format_eta(42) == "42 s");
    CHECK(report::format_eta(185) == "3 m 05 s");
    CHECK(report::format_eta(3720) == "1 h 02 m");
  }
}
