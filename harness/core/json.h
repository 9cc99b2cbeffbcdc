// The JSON codec of core records: the cases and results the worker protocol carries, the store's
// JSON columns, exports and imports. Round trips exactly: from_json(to_json(x)) == x field by
// field (tests/unit/test_json.cpp). The from_json functions throw FieldError on anything to_json
// would not have written.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/core/types.h"
#include "harness/util/error.h"

namespace attnprof::core {

// JSON read back strictly: a field of the wrong type (a string where a number was written, 1.5
// for an integer, 2^64 for an int64), an unknown enum value, or sample arrays of unequal
// lengths is this error, naming the field as a path ("cases[2].spec.batch") so that an import
// or a damaged row can say which one.
class FieldError : public util::InputError {
 public:
  FieldError(std::string field, std::string problem);
  const std::string& field() const { return m_field; }
  const std::string& problem() const { return m_problem; }
  // The same error seen one level out: "batch" within "spec" is "spec.batch".
  FieldError within(std::string_view outer) const;

 private:
  std::string m_field, m_problem;
};

// j[key] into `out` when present (null too, for the optional), strictly typed as above.
void read_field(const nlohmann::json& j, const char* key, std::string& out);
void read_field(const nlohmann::json& j, const char* key, std::int64_t& out);
void read_field(const nlohmann::json& j, const char* key, int& out);
void read_field(const nlohmann::json& j, const char* key, double& out);
void read_field(const nlohmann::json& j, const char* key, bool& out);
void read_field(const nlohmann::json& j, const char* key, std::optional<double>& out);
// FieldError("", "expected an object, got <type> <value>") unless j is an object.
void require_object(const nlohmann::json& j);

nlohmann::json to_json(const Case& c);
Case case_from_json(const nlohmann::json& j);

// One case's result: its spec, status, samples, summary, metrics, cost rows. Also what
// attnprof-worker sends attnprof for each case.
nlohmann::json to_json(const CaseResult& result);
CaseResult case_result_from_json(const nlohmann::json& j);

// A whole run: environment, cases, samples, summaries, metrics, cost rows.
nlohmann::json to_json(const Run& run);
Run run_from_json(const nlohmann::json& j);

nlohmann::json to_json(const CostRow& row);
CostRow cost_row_from_json(const nlohmann::json& j);

}  // namespace attnprof::core
