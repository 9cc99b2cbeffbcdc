// worker::protocol: the hello's version check, one message per line, samples round-tripped.
#include <doctest/doctest.h>

#include "harness/worker/protocol.h"

using namespace attnprof;

TEST_SUITE("worker::protocol") {
  TEST_CASE("a hello of this version passes; others say why") {
    CHECK(worker::check_hello(worker::encode(worker::hello()), "w") == "");
    CHECK(worker::check_hello("{\"hello\":\"attnprof-worker\"}", "w") ==
          "w sent a hello without a protocol version: \"{\"hello\":\"attnprof-worker\"}\"");
    CHECK(worker::check_hello("{\"hello\":\"attnprof-worker\",\"protocol\":2}", "w") ==
          "w speaks worker protocol 2 (build unknown), this attnprof speaks protocol 1 (build "
          "0.1.0); build both from one checkout");
    CHECK(worker::check_hello("[1,2]", "w") ==
          "w is not an attnprof worker: its first line was \"[1,2]\"");
  }

  TEST_CASE("one message is one line, whatever the text holds") {
    const std::string line = worker::encode({{"error", "two\nlines \xff"}});
    CHECK(line.find('\n') == std::string::npos);
    std::string why;
    auto back = worker::decode(line, &why);
    REQUIRE(back);
    CHECK((*back)["error"].get<std::string>().substr(0, 9) == "two\nlines");
    CHECK_FALSE(worker::decode("{\"a\":", &why));
    CHECK(why == "not JSON");
    CHECK_FALSE(worker::decode("3", &why));
    CHECK(why == "not a JSON object");
  }

  TEST_CASE("samples round-trip, and malformed ones are refused") {
    std::vector<core::Sample> s(2);
    s[0].ns = 5;
    s[0].at_ns = 7;
    s[1].ns = 6;
    s[1].at_ns = 8;
    s[1].sm_clock_mhz = 1980;
    auto back = worker::samples_from_json(worker::samples_to_json(s));
    REQUIRE(back.size() == 2);
    CHECK(back[0].ns == 5);
    CHECK(back[0].at_ns == 7);
    CHECK(back[1].ns == 6);
    CHECK(back[1].at_ns == 8);
    CHECK(back[1].sm_clock_mhz == 1980);
    CHECK_FALSE(back[0].sm_clock_mhz);
    CHECK_THROWS_AS(worker::samples_from_json(nlohmann::json::parse("[[1,2]]")),
                    std::invalid_argument);
    CHECK_THROWS_AS(worker::samples_from_json(nlohmann::json::parse("[[\"1\",2,null]]")),
                    std::invalid_argument);
  }
}
