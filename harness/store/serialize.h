// The store's JSON: the core codec (harness/core/json.h) for its columns, exports and imports,
// and the codec of what only the store reads and writes as JSON, the A/B rounds of an export.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/core/json.h"
#include "harness/store/database.h"

namespace attnprof::store {

// The store's files read their JSON with core's codec, under the same names.
using core::case_from_json;
using core::case_result_from_json;
using core::cost_row_from_json;
using core::FieldError;
using core::read_field;
using core::run_from_json;
using core::to_json;

// One round of an A/B: {"case", "round", "base_first", "base_ns", "head_ns", "base_n",
// "head_n", "at_ns", "pass"}. Reading checks what a round must be (a case, batch medians above
// 0, batches of at least one sample).
nlohmann::json to_json(const AbRound& r);
AbRound ab_round_from_json(const nlohmann::json& j);

}  // namespace attnprof::store
