// The CPU peaks' cache (peaks.h): one JSON object per file, an entry per machine and thread count.
#include "harness/env/peaks.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace attnprof::env {
namespace {

nlohmann::json read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

}  // namespace

std::string peaks_cache_path() {
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string();
  };
  if (auto d = set("ATTNPROF_CACHE_DIR"); !d.empty()) return d + "/cpu-peaks.json";
  if (auto d = set("XDG_CACHE_HOME"); !d.empty()) return d + "/attnprof/cpu-peaks.json";
  if (auto d = set("HOME"); !d.empty()) return d + "/.cache/attnprof/cpu-peaks.json";
  return "";
}

std::string cpu_peaks_key(const Description& d, int threads) {
  return fmt::format("{}/threads={}", fingerprint_for(d, "cpu").fingerprint(), threads);
}

std::optional<CpuPeaks> cached_peaks(const std::string& path, const std::string& key) {
  if (path.empty()) return std::nullopt;
  const nlohmann::json j = read_file(path);
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return std::nullopt;
  const auto tf = it->find("tflops"), gb = it->find("gbps");
  if (tf == it->end() || gb == it->end() || !tf->is_number() || !gb->is_number())
    return std::nullopt;
  CpuPeaks p{tf->get<double>(), gb->get<double>()};
  if (!(p.tflops > 0 && p.gbps > 0)) return std::nullopt;
  return p;
}

bool cache_peaks(const std::string& path, const std::string& key, const CpuPeaks& peaks) {
  if (path.empty()) return false;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  nlohmann::json j = read_file(path);
  j[key] = {{"tflops", peaks.tflops}, {"gbps", peaks.gbps}};
  const std::string tmp = fmt::format("{}.{}.tmp", path, getpid());
  {
    std::ofstream out(tmp);
    if (!(out << j.dump(2) << "\n")) {
      std::remove(tmp.c_str());
      return false;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::remove(tmp.c_str());
  return !ec;
}

}  // namespace attnprof::env
