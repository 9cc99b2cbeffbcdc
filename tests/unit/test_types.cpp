// core::types and util::error: the pinned environment fingerprint, enum names, diagnostics.
#include <doctest/doctest.h>

#include <string>

#include "harness/core/types.h"
#include "harness/util/error.h"

using namespace attnprof;

TEST_SUITE("core::types") {
  TEST_CASE("environment fingerprint is pinned: a change to it orphans every stored history") {
    core::Environment a;
    a.fields = {{"device.name", "cpu"}, {"torch.version", "2.11.0"}};
    // FNV-1a 64 over "device.name=cpu\ntorch.version=2.11.0\n", computed apart from this code.
    CHECK(a.fingerprint() == "799bae5fae009d90");
    CHECK(core::Environment{}.fingerprint() == "14650fb0739d0383");  // the FNV offset basis
    core::Environment b = a;
    b.fields["torch.version"] = "2.12.0";
    CHECK(b.fingerprint() != a.fingerprint());
    b = a;
    b.fields["device.name"] = "cpu ";
    CHECK(b.fingerprint() != a.fingerprint());
  }
  TEST_CASE("names round-trip: every enum value parses back from its name") {
    for (auto d : {core::DType::fp32, core::DType::fp16, core::DType::bf16})
      CHECK(core::parse_dtype(core::to_string(d)) == d);
    for (auto m : {core::MaskKind::none, core::MaskKind::causal, core::MaskKind::padding,
                   core::MaskKind::sliding_window, core::MaskKind::custom})
      CHECK(core::parse_mask(core::to_string(m)) == m);
    for (auto c : {core::CaseStatus::ok, core::CaseStatus::failed, core::CaseStatus::skipped,
                   core::CaseStatus::error})
      CHECK(core::parse_case_status(core::to_string(c)) == c);
    // The stored spellings themselves: the database and the JSON reports hold these.
    CHECK(std::string(core::to_string(core::DType::bf16)) == "bf16");
    CHECK(std::string(core::to_string(core::MaskKind::sliding_window)) == "sliding_window");
    CHECK(std::string(core::to_string(core::CaseStatus::skipped)) == "skipped");
    CHECK(std::string(core::to_string(core::Phase::decode)) == "decode");
    CHECK(std::string(core::to_string(core::Level::layer)) == "layer");
    CHECK_FALSE(core::parse_dtype("fp64"));
    CHECK_FALSE(core::parse_mask("Causal"));
    CHECK_FALSE(core::parse_case_status(""));
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
