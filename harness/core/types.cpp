// The few functions of the shared records (types.h): element sizes, kept samples, and the
// environment fingerprint that keys every history.
#include "harness/core/types.h"

#include <fmt/format.h>

#include "harness/core/hash.h"

namespace attnprof::core {

int bytes_per_element(DType d) {
  return d == DType::fp32 ? 4 : 2;
}

std::vector<double> kept_ns(const std::vector<Sample>& samples) {
  std::vector<double> v;
  v.reserve(samples.size());
  for (const auto& s : samples)
    if (!s.dropped) v.push_back(static_cast<double>(s.ns));
  return v;
}

std::string Environment::fingerprint() const {
  // FNV-1a over "key=value\n" in key order: stable across runs, platforms and library versions.
  std::uint64_t h = kFnv64Basis;
  for (const auto& [k, v] : fields) h = fnv1a64(k + "=" + v + "\n", h);
  return fmt::format("{:016x}", h);
}

}  // namespace attnprof::core
