// The line protocol between attnprof and attnprof-worker (protocol.h): one JSON object per
// line, written and read here for both ends.
#include "harness/worker/protocol.h"

#include <fmt/format.h>

namespace attnprof::worker {

using nlohmann::json;

std::string encode(const json& message) {
  // error_handler::replace: a kernel's message with invalid UTF-8 must not end the worker.
  return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<json> decode(const std::string& line, std::string* why) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    if (why) *why = "not JSON";
    return std::nullopt;
  }
  if (!j.is_object()) {
    if (why) *why = "not a JSON object";
    return std::nullopt;
  }
  return j;
}

json hello() {
  return {{"hello", "attnprof-worker"}, {"protocol", protocol_version}, {"build", build_version}};
}

std::string check_hello(const std::string& line, const std::string& worker_path) {
  std::string why;
  auto j = decode(line, &why);
  const std::string shown = line.size() > 120 ? line.substr(0, 120) + "..." : line;
  if (!j || j->value("hello", "") != "attnprof-worker")
    return fmt::format("{} is not an attnprof worker: its first line was \"{}\"", worker_path,
                       shown);
  const json& v = (*j)["protocol"];
  if (!v.is_number_integer())
    return fmt::format("{} sent a hello without a protocol version: \"{}\"", worker_path, shown);
  const int version = v.get<int>();
  if (version != protocol_version)
    return fmt::format(
        "{} speaks worker protocol {} (build {}), this attnprof speaks protocol {} (build {}); "
        "build both from one checkout",
        worker_path, version, j->value("build", "unknown"), protocol_version, build_version);
  return {};
}

json samples_to_json(const std::vector<core::Sample>& samples) {
  json out = json::array();
  for (const auto& s : samples)
    out.push_back({s.ns, s.at_ns, s.sm_clock_mhz ? json(*s.sm_clock_mhz) : json(nullptr)});
  return out;
}

std::vector<core::Sample> samples_from_json(const json& j) {
  std::vector<core::Sample> out;
  if (!j.is_array()) throw std::invalid_argument("samples: not an array");
  for (const auto& x : j) {
    if (!x.is_array() || x.size() != 3 || !x[0].is_number_integer() ||
        !x[1].is_number_integer() || !(x[2].is_null() || x[2].is_number()))
      throw std::invalid_argument("samples: each sample is [ns, at_ns, clock or null]");
    core::Sample s;
    s.ns = x[0].get<std::int64_t>();
    s.at_ns = x[1].get<std::int64_t>();
    if (!x[2].is_null()) s.sm_clock_mhz = x[2].get<double>();
    out.push_back(s);
  }
  return out;
}

}  // namespace attnprof::worker
