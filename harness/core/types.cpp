#include "harness/core/types.h"

#include <fmt/format.h>

namespace attnprof::core {

const char* to_string(Phase p) {
  return p == Phase::prefill ? "prefill" : "decode";
}

const char* to_string(DType d) {
  switch (d) {
    case DType::fp32:
      return "fp32";
    case DType::fp16:
      return "fp16";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

const char* to_string(MaskKind m) {
  switch (m) {
    case MaskKind::none:
      return "none";
    case MaskKind::causal:
      return "causal";
    case MaskKind::padding:
      return "padding";
    case MaskKind::sliding_window:
      return "sliding_window";
    case MaskKind::custom:
      return "custom";
  }
  return "?";
}

const char* to_string(Level l) {
  switch (l) {
    case Level::kernel:
      return "kernel";
    case Level::block:
      return "block";
    case Level::layer:
      return "layer";
  }
  return "?";
}

const char* to_string(CaseStatus s) {
  switch (s) {
    case CaseStatus::ok:
      return "ok";
    case CaseStatus::failed:
      return "failed";
    case CaseStatus::skipped:
      return "skipped";
    case CaseStatus::error:
      return "error";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (auto d : {DType::fp32, DType::fp16, DType::bf16})
    if (s == to_string(d)) return d;
  return std::nullopt;
}

std::optional<MaskKind> parse_mask(std::string_view s) {
  for (auto m : {MaskKind::none, MaskKind::causal, MaskKind::padding, MaskKind::sliding_window,
                 MaskKind::custom})
    if (s == to_string(m)) return m;
  return std::nullopt;
}

std::optional<CaseStatus> parse_case_status(std::string_view s) {
  for (auto c : {CaseStatus::ok, CaseStatus::failed, CaseStatus::skipped, CaseStatus::error})
    if (s == to_string(c)) return c;
  return std::nullopt;
}

int bytes_per_element(DType d) {
  return d == DType::fp32 ? 4 : 2;
}

std::string Environment::fingerprint() const {
  // FNV-1a over "key=value\n" in key order: stable across runs, platforms and library versions
  // (std::hash is not).
  std::uint64_t h = 1469598103934665603ull;
  for (const auto& [k, v] : fields) {
    for (char c : k + "=" + v + "\n") {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
  }
  return fmt::format("{:016x}", h);
}

}  // namespace attnprof::core
