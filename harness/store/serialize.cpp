// The A/B round's JSON (serialize.h), read as strictly as the core records (harness/core/json.h).
#include "harness/store/serialize.h"

#include <fmt/format.h>

#include <cmath>

namespace attnprof::store {

using nlohmann::json;

json to_json(const AbRound& r) {
  json j = {{"case", r.case_key},   {"round", r.round},     {"base_first", r.base_first},
            {"base_ns", r.base_ns}, {"head_ns", r.head_ns}, {"base_n", r.base_n},
            {"head_n", r.head_n},   {"at_ns", r.at_ns},     {"pass", r.pass}};
  // Only where recorded: an export of rounds from before schema v11 reads back as it was.
  if (r.base_q1_ns > 0) j["base_q1_ns"] = r.base_q1_ns;
  if (r.head_q1_ns > 0) j["head_q1_ns"] = r.head_q1_ns;
  // Only where read (a GPU side with NVML, since schema v12).
  if (r.base_clock_mhz > 0) j["base_clock_mhz"] = r.base_clock_mhz;
  if (r.head_clock_mhz > 0) j["head_clock_mhz"] = r.head_clock_mhz;
  return j;
}

AbRound ab_round_from_json(const json& j) {
  core::require_object(j);
  AbRound r;
  read_field(j, "case", r.case_key);
  if (r.case_key.empty()) throw FieldError("case", "missing");
  read_field(j, "round", r.round);
  read_field(j, "base_first", r.base_first);
  read_field(j, "base_ns", r.base_ns);
  read_field(j, "head_ns", r.head_ns);
  read_field(j, "base_n", r.base_n);
  read_field(j, "head_n", r.head_n);
  read_field(j, "at_ns", r.at_ns);
  read_field(j, "pass", r.pass);  // absent in exports made before schema v6: one pair, pass 0
  read_field(j, "base_q1_ns", r.base_q1_ns);  // absent before schema v11: not recorded
  read_field(j, "head_q1_ns", r.head_q1_ns);
  read_field(j, "base_clock_mhz", r.base_clock_mhz);  // absent before schema v12, or not read
  read_field(j, "head_clock_mhz", r.head_clock_mhz);
  if (r.pass < 0) throw FieldError("pass", fmt::format("expected 0 or more, got {}", r.pass));
  if (r.round < 0) throw FieldError("round", fmt::format("expected 0 or more, got {}", r.round));
  for (auto [key, ns] : {std::pair{"base_ns", r.base_ns}, std::pair{"head_ns", r.head_ns}})
    if (!(ns > 0) || !std::isfinite(ns))
      throw FieldError(key, fmt::format("a batch median must be above 0, got {}", ns));
  for (auto [key, ns] :
       {std::pair{"base_q1_ns", r.base_q1_ns}, std::pair{"head_q1_ns", r.head_q1_ns}}) {
    if (ns < 0 || !std::isfinite(ns))
      throw FieldError(
          key, fmt::format("a batch's lower quartile is 0 (not recorded) or above, got {}", ns));
  }
  if (r.base_q1_ns > r.base_ns || r.head_q1_ns > r.head_ns)
    throw FieldError(r.base_q1_ns > r.base_ns ? "base_q1_ns" : "head_q1_ns",
                     "a batch's lower quartile is above its median");
  if ((r.base_q1_ns > 0) != (r.head_q1_ns > 0))
    throw FieldError(r.base_q1_ns > 0 ? "head_q1_ns" : "base_q1_ns", "recorded for one side only");
  for (auto [key, mhz] :
       {std::pair{"base_clock_mhz", r.base_clock_mhz}, std::pair{"head_clock_mhz", r.head_clock_mhz}})
    if (mhz < 0 || !std::isfinite(mhz))
      throw FieldError(key, fmt::format("a batch's SM clock is 0 (not read) or above, got {}", mhz));
  for (auto [key, n] : {std::pair{"base_n", r.base_n}, std::pair{"head_n", r.head_n}})
    if (n < 1) throw FieldError(key, fmt::format("a batch has at least 1 sample, got {}", n));
  return r;
}

}  // namespace attnprof::store
