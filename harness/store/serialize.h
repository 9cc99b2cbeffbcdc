// core records <-> JSON, for the store's `params` column and for export/import. Round trips
// exactly: from_json(to_json(x)) == x field by field (tests/unit/test_serialize.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include "harness/core/types.h"

namespace attnprof::store {

nlohmann::json to_json(const core::Case& c);
core::Case case_from_json(const nlohmann::json& j);

// One case's result: its spec, status, samples, summary, metrics, cost rows. Also what
// attnprof-worker sends attnprof for each case.
nlohmann::json to_json(const core::CaseResult& result);
core::CaseResult case_result_from_json(const nlohmann::json& j);

// A whole run: environment, cases, samples, summaries, metrics, cost rows.
nlohmann::json to_json(const core::Run& run);
core::Run run_from_json(const nlohmann::json& j);

nlohmann::json to_json(const core::CostRow& row);
core::CostRow cost_row_from_json(const nlohmann::json& j);

}  // namespace attnprof::store
