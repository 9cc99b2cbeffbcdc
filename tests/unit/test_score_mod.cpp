// kernel::parse_score_mod: the modifiers the scenario language takes, their parameters' bounds,
// and their part of a case key.
#include <doctest/doctest.h>

#include "harness/kernel/score_mod.h"

using namespace attnprof;

TEST_SUITE("kernel::score_mod") {
  TEST_CASE("the modifiers and their keys") {
    using K = kernel::ScoreMod::Kind;
    CHECK(kernel::parse_score_mod("none")->kind == K::none);
    CHECK(kernel::parse_score_mod("")->kind == K::none);
    CHECK(kernel::parse_score_mod("alibi")->additive());
    CHECK(kernel::parse_score_mod("rel_bias")->additive());
    CHECK(kernel::parse_score_mod("head_bias")->additive());
    const auto cap = kernel::parse_score_mod("softcap:30");
    REQUIRE(cap);
    CHECK(cap->kind == K::softcap);
    CHECK(cap->cap == 30);
    CHECK_FALSE(cap->additive());
    CHECK(kernel::score_mod_key("softcap:30") == "softcap30");
    CHECK(kernel::score_mod_key("softcap:2.5") == "softcap2.5");
    CHECK(kernel::score_mod_key("alibi") == "alibi");
    CHECK(kernel::score_mod_key("none") == "");
  }

  TEST_CASE("bad modifiers say what is wrong") {
    std::string why;
    CHECK_FALSE(kernel::parse_score_mod("alibii", &why));
    CHECK(why ==
          "unknown score modifier \"alibii\" (modifiers: none, alibi, softcap:CAP, rel_bias, "
          "head_bias)");
    CHECK_FALSE(kernel::parse_score_mod("softcap", &why));
    CHECK(why == "softcap needs its cap: softcap:CAP (e.g. softcap:30)");
    CHECK_FALSE(kernel::parse_score_mod("softcap:0", &why));
    CHECK(why == "softcap's cap 0 is out of range [1, 10000]");
    CHECK_FALSE(kernel::parse_score_mod("softcap:3x", &why));
    CHECK(why == "softcap's cap \"3x\" is no number (softcap:CAP, e.g. softcap:30)");
    CHECK_FALSE(kernel::parse_score_mod("softcap:inf", &why));
  }
}
