// scenario::diags: edit distance, did-you-mean proposals, and one report per message and spot.
#include <doctest/doctest.h>

#include "harness/scenario/diags.h"

using namespace attnprof;
using scenario::closest;

TEST_SUITE("scenario::diags") {
  TEST_CASE("edit distance counts a transposition as one edit") {
    CHECK(scenario::edit_distance("heads", "heads") == 0);
    CHECK(scenario::edit_distance("haeds", "heads") == 1);
    CHECK(scenario::edit_distance("head", "heads") == 1);
    CHECK(scenario::edit_distance("", "abc") == 3);
    CHECK(scenario::edit_distance("kitten", "sitting") == 3);
  }

  TEST_CASE("did-you-mean proposes near words and abbreviations, nothing for strangers") {
    std::vector<std::string> keys = {"heads", "kv_heads", "head_dim", "hidden", "max_positions"};
    CHECK(closest("haeds", keys) == "heads");
    CHECK(closest("kv_head", keys) == "kv_heads");
    CHECK(closest("hdim", keys) == "head_dim");
    CHECK(closest("max_pos", keys) == "max_positions");
    CHECK(closest("banana", keys) == "");
    CHECK(closest("x", keys) == "");
    CHECK(scenario::did_you_mean("hiden", keys) == " (did you mean \"hidden\"?)");
    CHECK(scenario::did_you_mean("zzz", keys) == "");
  }

  TEST_CASE("the same message at the same spot is reported once") {
    scenario::Diags d;
    d.error({"a.yaml", 1, 2}, "x");
    d.error({"a.yaml", 1, 2}, "x");
    d.error({"a.yaml", 3, 2}, "x");
    CHECK(d.size() == 2);
    CHECK_THROWS_WITH_AS(d.raise(), "a.yaml:1:2: x\na.yaml:3:2: x", util::InputError);
  }
}
