// scenario::shard: shards partition and balance the cases whatever their order, and --shard
// i/n is checked.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "harness/scenario/scenario.h"
#include "harness/util/error.h"

using namespace attnprof;

namespace {
std::vector<core::Case> suite() {
  return scenario::load_text(R"(
model: llama-2-7b
dtype: bf16
hardware: {device: cuda}
measure: {warmup: 200ms, min_samples: 30, time_budget: 10s}
kernels: [sdpa.flash, sdpa.efficient, eager]
workloads:
  - {name: prefill, batch: [1, 4], seq_len: [128, 512, 2048, 4096], mask: [none, causal]}
  - {name: decode, batch: [1, 16, 64], kv_len: [1024, 4096]}
)",
                             "t.yaml")
      .cases;
}
}  // namespace

TEST_SUITE("scenario::shard") {
  TEST_CASE("shards partition the cases, keep their order, and balance cost") {
    auto cases = suite();
    REQUIRE(cases.size() == 66);
    std::map<std::string, int> owner;
    std::vector<double> costs;
    for (int i = 1; i <= 4; ++i) {
      auto part = scenario::shard(cases, i, 4);
      double cost = 0;
      std::size_t last = 0;
      for (const auto& c : part) {
        CHECK(owner.emplace(c.key, i).second);
        cost += scenario::expected_cost(c);
        auto pos = static_cast<std::size_t>(
            std::find_if(cases.begin(), cases.end(), [&](auto& x) { return x.key == c.key; }) -
            cases.begin());
        CHECK(pos >= last);
        last = pos;
      }
      costs.push_back(cost);
    }
    CHECK(owner.size() == cases.size());
    auto [lo, hi] = std::minmax_element(costs.begin(), costs.end());
    CHECK(*hi / *lo < 1.1);
  }

  TEST_CASE("the split depends on the cases, not their order") {
    auto cases = suite();
    auto shuffled = cases;
    std::mt19937 rng(42);
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (int i = 1; i <= 3; ++i) {
      std::vector<std::string> a, b;
      for (const auto& c : scenario::shard(cases, i, 3)) a.push_back(c.key);
      for (const auto& c : scenario::shard(shuffled, i, 3)) b.push_back(c.key);
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      CHECK(a == b);
    }
    CHECK(scenario::shard(cases, 1, 1).size() == cases.size());
    CHECK(scenario::shard({}, 2, 3).empty());
  }

  TEST_CASE("cost grows with work") {
    auto cases = suite();
    auto find = [&](const std::string& k) {
      return *std::find_if(cases.begin(), cases.end(), [&](auto& c) { return c.key == k; });
    };
    auto small = find("llama-2-7b/prefill/b1-s128-bf16-none/sdpa.flash");
    auto big = find("llama-2-7b/prefill/b4-s4096-bf16-none/sdpa.flash");
    auto causal = find("llama-2-7b/prefill/b4-s4096-bf16-causal/sdpa.flash");
    CHECK(scenario::case_flops(big) == doctest::Approx(4.0 * 4 * 32 * 4096 * 4096 * 128));
    CHECK(scenario::case_flops(causal) == doctest::Approx(4.0 * 4 * 32 * 128 * 4096 * 4097 / 2));
    CHECK(scenario::expected_cost(small) < scenario::expected_cost(big));
    auto layer = big;
    layer.level = core::Level::layer;
    CHECK(scenario::case_flops(layer) > scenario::case_flops(big));
    // Never past the budget plus warm-up and the check.
    CHECK(scenario::expected_cost(big) < 10 + 0.2 + 1);
  }

  TEST_CASE("--shard i/n is parsed and checked") {
    CHECK(scenario::parse_shard("2/4") == std::pair{2, 4});
    CHECK_THROWS_WITH_AS(scenario::parse_shard("5/4"),
                         "--shard: shard index must be between 1 and 4, got 5", util::InputError);
    CHECK_THROWS_WITH_AS(scenario::parse_shard("0/4"),
                         "--shard: shard index must be between 1 and 4, got 0", util::InputError);
    CHECK_THROWS_WITH_AS(scenario::parse_shard("two"),
                         "--shard: expected INDEX/COUNT such as 2/4, got \"two\"",
                         util::InputError);
    CHECK_THROWS_WITH_AS(scenario::parse_shard("1/0"),
                         "--shard: shard count must be between 1 and 100000, got 0",
                         util::InputError);
    CHECK_THROWS_AS(scenario::shard({}, 0, 2), util::InputError);
    // An empty value (--shard '') is a mistake, not "every case".
    CHECK_THROWS_WITH_AS(scenario::parse_shard(""),
                         "--shard: expected INDEX/COUNT such as 2/4, got \"\"", util::InputError);
    CHECK_THROWS_WITH_AS(scenario::parse_shard("/"),
                         "--shard: expected INDEX/COUNT such as 2/4, got \"/\"", util::InputError);
  }
}
