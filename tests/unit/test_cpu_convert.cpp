// kernels/cpu/convert.h: half and bfloat16 to float and back, rounding to nearest even.
#include <doctest/doctest.h>

#include <cmath>
#include <ios>
#include <limits>

#include "kernels/cpu/convert.h"

using namespace attnprof::kernels::cpu;

TEST_SUITE("kernels::cpu::convert") {
  TEST_CASE("every finite half round-trips through float exactly") {
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
      const auto bits = static_cast<std::uint16_t>(h);
      const float f = half_to_float(bits);
      if (std::isnan(f)) continue;
      REQUIRE_MESSAGE(float_to_half(f) == bits, "half 0x" << std::hex << h);
    }
  }

  TEST_CASE("half known values, rounding to nearest even, overflow and subnormals") {
    CHECK(half_to_float(0x3c00) == 1.0f);
    CHECK(half_to_float(0xc000) == -2.0f);
    CHECK(half_to_float(0x7bff) == 65504.0f);
    CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
    CHECK(float_to_half(65519.0f) == 0x7bff);
    CHECK(float_to_half(65520.0f) == 0x7c00);  // the tie goes to the even pattern: inf
    CHECK(float_to_half(-1e6f) == 0xfc00);
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
    CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
    CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
    CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);     // tie with 0: even
    CHECK(float_to_half(std::ldexp(3.0f, -25)) == 0x0002);     // 1.5 ulp: to even 2
    CHECK(float_to_half(std::ldexp(1023.5f, -24)) == 0x0400);  // rounds up into normals
    CHECK(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  }

  TEST_CASE("bf16 known values and rounding to nearest even") {
    CHECK(bf16_to_float(0x3f80) == 1.0f);
    CHECK(float_to_bf16(1.0f) == 0x3f80);
    CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);      // tie: even
    CHECK(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);  // tie: even (up)
    CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -12)) == 0x3f81);
    CHECK(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
      const float f = bf16_to_float(static_cast<std::uint16_t>(h));
      if (!std::isnan(f)) REQUIRE(float_to_bf16(f) == h);
    }
  }
}
