// FNV-1a, the one hash behind everything attnprof must compute the same on every platform,
// compiler and library version (std::hash is not): environment fingerprints, varlen case keys,
// the seeds of the gate's bootstraps. Changing it renames stored history.
#pragma once

#include <cstdint>
#include <string_view>

namespace attnprof::core {

inline constexpr std::uint64_t kFnv64Basis = 1469598103934665603ull;
inline constexpr std::uint32_t kFnv32Basis = 2166136261u;

// 64-bit FNV-1a of `bytes`, continuing from `h` (so a hash can be fed in pieces).
constexpr std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h = kFnv64Basis) {
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// 32-bit FNV-1a, likewise: the short hashes that appear inside case keys.
constexpr std::uint32_t fnv1a32(std::string_view bytes, std::uint32_t h = kFnv32Basis) {
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

}  // namespace attnprof::core
