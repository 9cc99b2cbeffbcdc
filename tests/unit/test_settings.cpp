// scenario's measure settings of a busy machine or GPU (settings.cpp): the descheduling and
// throttling limits, and measure.l2 with what it does to a case's key and where it is refused.
#include <doctest/doctest.h>

#include "harness/scenario/scenario.h"
#include "harness/util/error.h"

using namespace attnprof;

namespace {

std::string errors(const std::string& yaml) {
  try {
    scenario::load_text(yaml, "t.yaml", {{"sdpa.flash", "sdpa.math"}});
    return "";
  } catch (const util::InputError& e) {
    return e.what();
  }
}

}  // namespace

TEST_SUITE("scenario::settings") {
  TEST_CASE("the busy-machine and throttling limits are read, percentages and a number") {
    auto s = scenario::load_text(R"(model: bert-base
measure: {max_descheduled: 30%, max_descheduled_shift: 2.5, max_throttled: 5%}
workloads: [{seq_len: 8, kernels: [sdpa.math]}]
)",
                                 "t.yaml", {{"sdpa.math"}});
    REQUIRE(s.cases.size() == 1);
    CHECK(s.cases[0].measure.max_descheduled == doctest::Approx(0.30));
    CHECK(s.cases[0].measure.max_descheduled_shift == 2.5);
    CHECK(s.cases[0].measure.max_throttled == doctest::Approx(0.05));
    CHECK(errors("model: bert-base\nmeasure: {max_throttled: 0.05}\nworkloads: [{seq_len: 8, "
                 "kernels: [sdpa.math]}]\n")
              .find("t.yaml:2:26: ") != std::string::npos);
  }

  TEST_CASE("l2: warm is in a GPU case's key, cold (the default) is not, and the CPU has none") {
    auto keys = [](const std::string& device, const std::string& l2) {
      auto s = scenario::load_text(
          "model: bert-base\nhardware: {device: " + device + "}\n" +
              (l2.empty() ? "" : "measure: {l2: " + l2 + "}\n") +
              "workloads: [{seq_len: 128, kernels: [sdpa.flash]}]\n",
          "t.yaml", {{"sdpa.flash"}});
      REQUIRE(s.cases.size() == 1);
      return s.cases[0].key + " " + s.cases[0].measure.l2;
    };
    CHECK(keys("cuda", "") == "bert-base/prefill/b1-s128-fp32-none/sdpa.flash ");
    CHECK(keys("cuda", "cold") == "bert-base/prefill/b1-s128-fp32-none/sdpa.flash cold");
    CHECK(keys("cuda", "warm") == "bert-base/prefill/b1-s128-fp32-none-l2warm/sdpa.flash warm");
    CHECK(keys("cpu", "warm") == "bert-base/prefill/b1-s128-fp32-none/sdpa.flash warm");
  }

  TEST_CASE("l2: cold on the CPU, or a state that is not one, is refused at its spot") {
    CHECK(errors("model: bert-base\nmeasure: {l2: cold}\nworkloads: [{seq_len: 8, kernels: "
                 "[sdpa.math]}]\n") ==
          "t.yaml:2:15: l2: cold needs a cuda device: the CPU timer flushes no cache, its samples "
          "are warm");
    CHECK(errors("model: bert-base\nhardware: {device: cuda}\nmeasure: {l2: tepid}\nworkloads: "
                 "[{seq_len: 8, kernels: [sdpa.math]}]\n")
              .starts_with("t.yaml:3:15: l2: "));
  }
}
