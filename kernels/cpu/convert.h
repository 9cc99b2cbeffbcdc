// fp16 and bf16 <-> fp32 on the host, bit-exact with round-to-nearest-even (what CUDA's
// __float2half_rn / __float2bfloat16_rn and at::Half / at::BFloat16 do), and row loads/stores
// that turn any kernel dtype into fp32. Header-only: the CPU kernels, their tests and the device
// tests (which prepare fp16/bf16 inputs on the host) share it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/attention_params.h"

namespace attnprof::kernels::cpu {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t man = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in fp32
    const float f = std::ldexp(static_cast<float>(man), -24);
    return sign ? -f : f;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (man << 13));  // inf, nan
  return bits_float(sign | ((exp + 112) << 23) | (man << 13));
}

inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = float_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)
    return static_cast<std::uint16_t>(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
  // 65520 is halfway between 65504 (the largest half, odd mantissa) and 65536: ties go to inf.
  if (ax >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (ax < 0x38800000u) {
    // Below 2^-14 the result is subnormal: |f| * 2^24 rounded to an integer (nearbyint rounds to
    // nearest even in the default mode); 1024 rounds up into the smallest normal, which the bit
    // pattern 0x400 already is.
    const float scaled = bits_float(ax) * 16777216.0f;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
  }
  // Normal: rebias the exponent (127 -> 15), then round the 13 dropped mantissa bits to nearest
  // even; a carry into the exponent is the correct rounding up to the next binade.
  const std::uint32_t e = ax - 0x38000000u;
  return static_cast<std::uint16_t>(sign | ((e + 0xfffu + ((e >> 13) & 1u)) >> 13));
}

inline float bf16_to_float(std::uint16_t b) {
  return bits_float(static_cast<std::uint32_t>(b) << 16);
}

inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet nan
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// Element `index` of a buffer of `type`, as fp32.
inline float load_element(const void* base, ScalarType type, std::int64_t index) {
  switch (type) {
    case ScalarType::f32:
      return static_cast<const float*>(base)[index];
    case ScalarType::f16:
      return half_to_float(static_cast<const std::uint16_t*>(base)[index]);
    case ScalarType::bf16:
      return bf16_to_float(static_cast<const std::uint16_t*>(base)[index]);
  }
  return 0;
}

inline void store_element(void* base, ScalarType type, std::int64_t index, float value) {
  switch (type) {
    case ScalarType::f32:
      static_cast<float*>(base)[index] = value;
      break;
    case ScalarType::f16:
      static_cast<std::uint16_t*>(base)[index] = float_to_half(value);
      break;
    case ScalarType::bf16:
      static_cast<std::uint16_t*>(base)[index] = float_to_bf16(value);
      break;
  }
}

// n contiguous elements starting at `index`, as fp32, times `scale`. The switch sits outside the
// loop so each case is a plain loop the compiler can vectorize.
inline void load_row(const void* base, ScalarType type, std::int64_t index, int n, float* out,
                     float scale = 1.0f) {
  switch (type) {
    case ScalarType::f32: {
      const float* src = static_cast<const float*>(base) + index;
      for (int d = 0; d < n; ++d) out[d] = src[d] * scale;
      break;
    }
    case ScalarType::f16: {
      const std::uint16_t* src = static_cast<const std::uint16_t*>(base) + index;
      for (int d = 0; d < n; ++d) out[d] = half_to_float(src[d]) * scale;
      break;
    }
    case ScalarType::bf16: {
      const std::uint16_t* src = static_cast<const std::uint16_t*>(base) + index;
      for (int d = 0; d < n; ++d) out[d] = bf16_to_float(src[d]) * scale;
      break;
    }
  }
}

inline void store_row(void* base, ScalarType type, std::int64_t index, int n, const float* in) {
  for (int d = 0; d < n; ++d) store_element(base, type, index + d, in[d]);
}

}  // namespace attnprof::kernels::cpu
