// costmatrix::perfetto_json: ops and device work on one timeline, linked by flow events.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness/costmatrix/perfetto.h"

using namespace attnprof;
using nlohmann::json;

namespace {

trace::Trace small_trace() {
  trace::Trace t;
  t.start_ns = 1'700'000'000'000'000'000ull;  // epoch-like values, as cuptiGetTimestamp gives
  t.end_ns = t.start_ns + 5'000;
  trace::OpEvent mm;
  mm.name = "aten::mm";
  mm.input_shapes = "[[4, 8], [8, 4]]";
  mm.input_dtypes = "[float, float]";
  mm.start_ns = t.start_ns + 1'000;
  mm.end_ns = t.start_ns + 2'500;
  mm.external_id = 7;
  mm.bytes_allocated = 64;
  t.ops.push_back(mm);
  trace::DeviceEvent k;
  k.name = "ampere_sgemm_32x32";
  k.op = 0;
  k.stream = 7;
  k.device = 0;
  k.correlation_id = 42;
  k.start_ns = t.start_ns + 3'000;
  k.end_ns = t.start_ns + 4'250;
  k.grid = {2, 1, 1};
  k.block = {256, 1, 1};
  t.device.push_back(k);
  trace::DeviceEvent c;
  c.kind = trace::DeviceKind::memcpy;
  c.name = "Memcpy DtoH";
  c.op = -1;
  c.stream = 7;
  c.bytes = 64;
  c.start_ns = t.start_ns + 4'300;
  c.end_ns = t.start_ns + 4'400;
  t.device.push_back(c);
  t.device_traced = true;
  t.notes.push_back("a note");
  return t;
}

std::vector<json> events_with(const json& doc, const std::string& ph) {
  std::vector<json> out;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

}  // namespace

TEST_SUITE("costmatrix::Perfetto") {
  TEST_CASE("ops and kernels share one timeline in microseconds from the start") {
    const json doc = json::parse(costmatrix::perfetto_json(small_trace()));
    CHECK(doc["displayTimeUnit"] == "ns");
    const auto slices = events_with(doc, "X");
    REQUIRE(slices.size() == 3);
    CHECK(slices[0]["name"] == "aten::mm");
    CHECK(slices[0]["cat"] == "cpu_op");
    CHECK(slices[0]["pid"] == 0);
    CHECK(slices[0]["ts"].get<double>() == doctest::Approx(1.0));
    CHECK(slices[0]["dur"].get<double>() == doctest::Approx(1.5));
    CHECK(slices[0]["args"]["Input Dims"] == "[[4, 8], [8, 4]]");
    CHECK(slices[0]["args"]["External id"] == 7);
    CHECK(slices[1]["cat"] == "kernel");
    CHECK(slices[1]["pid"] == 1);
    CHECK(slices[1]["tid"] == 7);
    CHECK(slices[1]["ts"].get<double>() == doctest::Approx(3.0));
    CHECK(slices[1]["dur"].get<double>() == doctest::Approx(1.25));
    CHECK(slices[1]["args"]["op"] == "aten::mm");
    CHECK(slices[1]["args"]["grid"] == json::array({2, 1, 1}));
    CHECK(slices[2]["cat"] == "gpu_memcpy");
    CHECK(slices[2]["args"]["bytes"] == 64);
    CHECK_FALSE(slices[2]["args"].contains("op"));
    CHECK(doc["otherData"]["notes"][0] == "a note");
  }

  TEST_CASE("a flow arrow links each claimed kernel to its op, none for unclaimed work") {
    const json doc = json::parse(costmatrix::perfetto_json(small_trace()));
    const auto starts = events_with(doc, "s");
    const auto ends = events_with(doc, "f");
    REQUIRE(starts.size() == 1);
    REQUIRE(ends.size() == 1);
    CHECK(starts[0]["id"] == ends[0]["id"]);
    CHECK(starts[0]["pid"] == 0);
    CHECK(starts[0]["ts"].get<double>() == doctest::Approx(1.0));
    CHECK(ends[0]["pid"] == 1);
    CHECK(ends[0]["tid"] == 7);
    CHECK(ends[0]["bp"] == "e");
  }

  TEST_CASE("processes and tracks are named") {
    const json doc = json::parse(costmatrix::perfetto_json(small_trace()));
    std::vector<std::string> names;
    for (const auto& e : events_with(doc, "M")) names.push_back(e["args"]["name"]);
    CHECK(names == std::vector<std::string>{"CPU", "thread 0", "GPU 0", "stream 7"});
  }

  TEST_CASE("names that need escaping stay valid JSON") {
    auto t = small_trace();
    t.ops[0].name = "my::op\"with\\quotes\n";
    const json doc = json::parse(costmatrix::perfetto_json(t));
    CHECK(events_with(doc, "X")[0]["name"] == "my::op\"with\\quotes\n");
  }
}
