// A small, seedable generator whose stream is the same on every compiler and standard library.
// std::mt19937 is portable but std::uniform_int_distribution is not (libstdc++ and libc++ draw
// differently), and a gate verdict must not depend on which toolchain built attnprof.
#pragma once

#include <cmath>
#include <cstdint>

namespace attnprof::stats {

// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : m_s) s = splitmix(seed);
  }
  std::uint64_t next() {
    const std::uint64_t r = rotl(m_s[1] * 5, 7) * 9, t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return r;
  }
  // Uniform in [0, n) by multiply-shift (Lemire). The bias is below n / 2^64, far under any
  // effect a bootstrap could show, so the rejection step is left out to keep this branch-free.
  std::uint32_t below(std::uint32_t n) {
    return static_cast<std::uint32_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Standard normal (Box-Muller, one value per call): for simulations in tests and benchmarks.
  double normal() {
    const double u1 = 1 - uniform(), u2 = uniform();  // u1 in (0, 1]: log(u1) is finite
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * 3.14159265358979323846 * u2);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t m_s[4];
};

}  // namespace attnprof::stats
