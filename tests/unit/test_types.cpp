#include <doctest/doctest.h>

#include "harness/core/types.h"
#include "harness/util/error.h"

using namespace attnprof;

TEST_SUITE("core::types") {
  TEST_CASE("environment fingerprint is stable and depends on every field") {
    core::Environment a;
    a.fields = {{"device.name", "cpu"}, {"torch.version", "2.11.0"}};
    core::Environment b = a;
    CHECK(a.fingerprint() == b.fingerprint());
    CHECK(a.fingerprint().size() == 16);
    b.fields["torch.version"] = "2.12.0";
    CHECK(a.fingerprint() != b.fingerprint());
  }
  TEST_CASE("names round-trip") {
    CHECK(core::parse_dtype("bf16") == core::DType::bf16);
    CHECK_FALSE(core::parse_dtype("fp64"));
    CHECK(core::parse_mask("sliding_window") == core::MaskKind::sliding_window);
    CHECK(core::parse_case_status("skipped") == core::CaseStatus::skipped);
  }
}

TEST_SUITE("util::error") {
  TEST_CASE("diagnostics name the spot") {
    CHECK(util::Diagnostic{"s.yaml", 3, 5, "bad"}.to_string() == "s.yaml:3:5: bad");
    CHECK(util::Diagnostic{"s.yaml", 0, 0, "missing"}.to_string() == "s.yaml: missing");
    util::InputError e({{"a.yaml", 1, 2, "x"}, {"a.yaml", 4, 1, "y"}});
    CHECK(std::string(e.what()) == "a.yaml:1:2: x\na.yaml:4:1: y");
    CHECK(e.diagnostics().size() == 2);
  }
}
