// scenario::values: units for durations and percentages, ranges for integers.
#include <doctest/doctest.h>

#include "harness/scenario/values.h"

using namespace attnprof::scenario;

TEST_SUITE("scenario::values") {
  TEST_CASE("durations need a unit; percentages need a percent sign") {
    CHECK(parse_duration_s("200ms") == doctest::Approx(0.2));
    CHECK(parse_duration_s("10s") == doctest::Approx(10));
    CHECK(parse_duration_s("1.5 s") == doctest::Approx(1.5));
    CHECK(parse_duration_s("2min") == doctest::Approx(120));
    CHECK(parse_duration_s("500us") == doctest::Approx(5e-4));
    CHECK(parse_duration_s("3ns") == doctest::Approx(3e-9));
    CHECK_FALSE(parse_duration_s("200"));
    CHECK_FALSE(parse_duration_s("ms"));
    CHECK_FALSE(parse_duration_s("fast"));
    CHECK_FALSE(parse_duration_s("1e999s"));
    CHECK(parse_percent("3%") == doctest::Approx(0.03));
    CHECK(parse_percent("0.5%") == doctest::Approx(0.005));
    CHECK_FALSE(parse_percent("0.5"));
    CHECK_FALSE(parse_percent("%"));
  }

  TEST_CASE("integers are whole and in range; numbers are finite") {
    CHECK(parse_int("128") == 128);
    CHECK(parse_int("+3") == 3);
    CHECK_FALSE(parse_int("1.0"));
    CHECK_FALSE(parse_int("12a"));
    CHECK_FALSE(parse_int("99999999999999999999"));
    CHECK(parse_number("0.125") == 0.125);
    CHECK_FALSE(parse_number("nan"));
    CHECK_FALSE(parse_number("inf"));
    Diags d;
    Node n;
    n.kind = Node::Kind::scalar;
    n.scalar = "0";
    n.loc = {"f.yaml", 2, 3};
    CHECK_FALSE(read_int(n, "batch", 1, 10, d));
    n.scalar = "11";
    CHECK_FALSE(read_int(n, "batch", 1, 10, d));
    REQUIRE(d.size() == 2);
    CHECK(d.list()[0].to_string() == "f.yaml:2:3: batch must be at least 1, got 0");
    CHECK(d.list()[1].to_string() == "f.yaml:2:3: batch must be at most 10, got 11");
  }
}
