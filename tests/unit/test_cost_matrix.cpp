// costmatrix::build, kernels(), busy time and share_of on hand-made traces whose answers can be
// worked out on paper.
#include <doctest/doctest.h>

#include "harness/costmatrix/cost_matrix.h"

using namespace attnprof;

namespace {

trace::OpEvent op(std::string name, std::int64_t parent, std::uint64_t s, std::uint64_t e,
                  std::string shapes = "") {
  trace::OpEvent o;
  o.name = std::move(name);
  o.parent = parent;
  o.start_ns = s;
  o.end_ns = e;
  o.input_shapes = std::move(shapes);
  return o;
}

trace::DeviceEvent kernel(std::string name, std::int64_t op, std::uint64_t s, std::uint64_t e) {
  trace::DeviceEvent d;
  d.name = std::move(name);
  d.op = op;
  d.start_ns = s;
  d.end_ns = e;
  d.grid = {4, 2, 1};
  d.block = {128, 1, 1};
  d.registers_per_thread = 64;
  d.static_shared_bytes = 1024;
  d.dynamic_shared_bytes = 2048;
  return d;
}

// Eager attention: matmul -> softmax -> matmul under a user scope, each matmul calling bmm.
trace::Trace eager_attention(bool with_device) {
  trace::Trace t;
  t.start_ns = 0;
  t.end_ns = 1000;
  const std::string mm = "[[1, 2, 4, 8], [1, 2, 8, 4]]";
  t.ops = {op("attnprof::attention", -1, 0, 1000),
           op("aten::matmul", 0, 100, 400, mm),
           op("aten::bmm", 1, 150, 350, "[[2, 4, 8], [2, 8, 4]]"),
           op("aten::softmax", 0, 450, 600, "[[1, 2, 4, 4], []]"),
           op("aten::matmul", 0, 650, 950, mm),
           op("aten::bmm", 4, 700, 900, "[[2, 4, 8], [2, 8, 4]]")};
  t.ops[1].bytes_allocated = 256;
  t.ops[4].bytes_allocated = 256;
  t.ops[3].bytes_freed = 128;
  if (with_device) {
    t.device_traced = true;
    t.device = {kernel("gemm", 2, 1000, 1300), kernel("softmax_kernel", 3, 1350, 1400),
                kernel("gemm", 5, 1400, 1700)};
    trace::DeviceEvent copy;
    copy.kind = trace::DeviceKind::memcpy;
    copy.name = "Memcpy DtoH";
    copy.start_ns = 1700;
    copy.end_ns = 1800;
    copy.bytes = 64;
    t.device.push_back(copy);
  }
  return t;
}

const core::CostRow& row(const std::vector<core::CostRow>& rows, const std::string& name) {
  for (const auto& r : rows)
    if (r.op == name) return r;
  FAIL("no row " << name);
  return rows.front();
}

}  // namespace

TEST_SUITE("costmatrix::CostMatrix") {
  TEST_CASE("CPU self excludes children, total includes them; calls aggregate") {
    const auto rows = costmatrix::build(eager_attention(false));
    REQUIRE(rows.size() == 4);
    const auto& matmul = row(rows, "aten::matmul");
    CHECK(matmul.calls == 2);
    CHECK(matmul.cpu_total_ns == 600);
    CHECK(matmul.cpu_self_ns == 200);
    CHECK(matmul.parent == "attnprof::attention");
    CHECK(matmul.bytes_allocated == 512);
    const auto& attn = row(rows, "attnprof::attention");
    CHECK(attn.cpu_total_ns == 1000);
    CHECK(attn.cpu_self_ns == 250);
    CHECK(attn.parent.empty());
    CHECK(row(rows, "aten::softmax").bytes_freed == 128);
    // Ranked by CPU self time on a CPU trace; shares are of the CPU self total (1000).
    CHECK(rows[0].op == "aten::bmm");
    CHECK(rows[0].cpu_self_ns == 400);
    CHECK(rows[0].share == doctest::Approx(0.4));
    double total_share = 0;
    for (const auto& r : rows) total_share += r.share;
    CHECK(total_share == doctest::Approx(1.0));
  }

  TEST_CASE("device self is the op's own kernels, device total adds descendants'") {
    const auto rows = costmatrix::build(eager_attention(true));
    REQUIRE(rows.size() == 5);         // four ops and the unclaimed memcpy
    CHECK(rows[0].op == "aten::bmm");  // ranked by device self time
    CHECK(rows[0].device_self_ns == 600);
    CHECK(rows[0].launches == 2);
    REQUIRE(rows[0].kernels.size() == 1);
    CHECK(rows[0].kernels[0] == std::pair<std::string, int>{"gemm", 2});
    CHECK(rows[0].kernel_ns == std::vector<double>{600});
    CHECK(rows[0].share == doctest::Approx(600.0 / 750.0));
    const auto& matmul = row(rows, "aten::matmul");
    CHECK(matmul.device_self_ns == 0);
    CHECK(matmul.device_total_ns == 600);
    CHECK(matmul.launches == 0);
    CHECK(row(rows, "attnprof::attention").device_total_ns == 650);
    const auto& none = row(rows, std::string(costmatrix::kNoOp));
    CHECK(none.device_self_ns == 100);
    CHECK(none.launches == 0);  // a memcpy is no kernel launch
    CHECK(none.copies == 1);
    CHECK(none.kernels[0].first == "Memcpy DtoH");
  }

  TEST_CASE("same op with different shapes gives separate rows") {
    auto t = eager_attention(false);
    t.ops[4].input_shapes = "[[1, 2, 4, 4], [1, 2, 4, 8]]";
    const auto rows = costmatrix::build(t);
    int matmuls = 0;
    for (const auto& r : rows) matmuls += r.op == "aten::matmul";
    CHECK(matmuls == 2);
  }

  TEST_CASE("kernel view groups by kernel, op and launch shape") {
    auto t = eager_attention(true);
    t.device[2].grid = {8, 2, 1};  // the second gemm launches a bigger grid
    const auto k = costmatrix::kernels(t);
    REQUIRE(k.rows.size() == 3);  // memcpy is not a kernel
    CHECK(k.total_ns == 650);
    CHECK(k.rows[0].kernel == "gemm");
    CHECK(k.rows[0].op == "aten::bmm");
    CHECK(k.rows[0].calls == 1);
    CHECK(k.rows[0].shared_bytes == 3072);
    CHECK(k.rows[0].registers_per_thread == 64);
    CHECK(k.rows[2].kernel == "softmax_kernel");
    CHECK(k.rows[2].total_ns == 50);
  }

  TEST_CASE("busy time counts overlaps once; wall spans to the last device record") {
    trace::Trace t;
    t.start_ns = 0;
    t.end_ns = 100;
    t.device = {kernel("a", -1, 100, 200), kernel("b", -1, 150, 250), kernel("c", -1, 400, 500)};
    CHECK(costmatrix::device_busy_ns(t) == 250);
    CHECK(costmatrix::wall_ns(t) == 500);
  }

  TEST_CASE("share_of: the attention scope's part of the case") {
    auto t = eager_attention(false);
    t.ops.push_back(op("aten::layer_norm", -1, 1000, 2000));
    CHECK(costmatrix::share_of(t, "attnprof::attention") == doctest::Approx(0.5));
    CHECK(costmatrix::share_of(t, "aten::softmax") == doctest::Approx(150.0 / 2000.0));
    CHECK(costmatrix::share_of(t, "aten::nothing") == 0);
    // On a device trace the shares are of device time: 650 of 750 (the memcpy is nobody's).
    CHECK(costmatrix::share_of(eager_attention(true), "attnprof::attention") ==
          doctest::Approx(650.0 / 750.0));
  }

  TEST_CASE("a whole-layer module's attention share: its own attention ops, outermost") {
    CHECK(costmatrix::is_attention_op("aten::scaled_dot_product_attention"));
    CHECK(costmatrix::is_attention_op("aten::_scaled_dot_product_flash_attention_for_cpu"));
    CHECK(costmatrix::is_attention_op("aten::_efficient_attention_forward"));
    CHECK(costmatrix::is_attention_op("flex_attention"));
    CHECK_FALSE(costmatrix::is_attention_op("aten::softmax"));
    CHECK_FALSE(costmatrix::is_attention_op("aten::bmm"));
    trace::Trace t;
    t.ops.push_back(op("python: layers.py:Llama", -1, 0, 1000));
    t.ops.push_back(op("aten::scaled_dot_product_attention", 0, 100, 300));
    t.ops.push_back(op("aten::_scaled_dot_product_flash_attention_for_cpu", 1, 120, 280));
    t.ops.push_back(op("aten::linear", 0, 400, 900));
    // 200 of 1000: the inner SDPA op is not counted twice.
    CHECK(costmatrix::share_of(t, costmatrix::is_attention_op) == doctest::Approx(0.2));
  }

  TEST_CASE("the tracer's own time inside an op is charged to neither its self nor its total") {
    // attention 0..1000 holds matmul 100..400; the tracer spent 60 ns describing matmul's inputs
    // and taking its lock before matmul's window opened, and 40 ns after it closed.
    trace::Trace t;
    t.ops = {op("attnprof::attention", -1, 0, 1000), op("aten::matmul", 0, 100, 400)};
    t.ops[0].tracer_ns = 100;
    const auto rows = costmatrix::build(t);
    const auto& attention = row(rows, "attnprof::attention");
    CHECK(attention.cpu_total_ns == 900);
    CHECK(attention.cpu_self_ns == 600);  // 1000 - 100 (tracer) - 300 (matmul)
    CHECK(row(rows, "aten::matmul").cpu_self_ns == 300);
    // On the CPU share_of uses the same corrected times.
    t.ops[1].name = "attnprof::inner";
    CHECK(costmatrix::share_of(t, "attnprof::inner") == doctest::Approx(300.0 / 900.0));
  }

  TEST_CASE("a pass of several calls is reported per call, calls counted per call") {
    trace::Trace one = eager_attention(true);
    trace::Trace three;
    three.calls = 3;
    three.device_traced = true;
    // The same call three times, 2000 ns apart, with op indices shifted for each copy.
    for (int call = 0; call < 3; ++call) {
      const auto base = static_cast<std::int64_t>(three.ops.size());
      const std::uint64_t dt = 2000u * call;
      for (auto o : one.ops) {
        o.start_ns += dt;
        o.end_ns += dt;
        if (o.parent >= 0) o.parent += base;
        three.ops.push_back(o);
      }
      for (auto d : one.device) {
        d.start_ns += dt;
        d.end_ns += dt;
        if (d.op >= 0) d.op += base;
        three.device.push_back(d);
      }
    }
    const auto per_call = costmatrix::build(three);
    const auto single = costmatrix::build(one);
    REQUIRE(per_call.size() == single.size());
    for (std::size_t i = 0; i < single.size(); ++i) {
      CAPTURE(single[i].op);
      CHECK(per_call[i].op == single[i].op);
      CHECK(per_call[i].calls == single[i].calls);
      CHECK(per_call[i].cpu_self_ns == doctest::Approx(single[i].cpu_self_ns));
      CHECK(per_call[i].cpu_total_ns == doctest::Approx(single[i].cpu_total_ns));
      CHECK(per_call[i].device_self_ns == doctest::Approx(single[i].device_self_ns));
      CHECK(per_call[i].device_total_ns == doctest::Approx(single[i].device_total_ns));
      CHECK(per_call[i].launches == single[i].launches);
      CHECK(per_call[i].copies == single[i].copies);
      CHECK(per_call[i].kernels == single[i].kernels);
      CHECK(per_call[i].kernel_ns == single[i].kernel_ns);
      CHECK(per_call[i].bytes_allocated == single[i].bytes_allocated);
      CHECK(per_call[i].share == doctest::Approx(single[i].share));
    }
    CHECK(row(per_call, "aten::matmul").calls == 2);  // two matmuls in each call
    const auto k = costmatrix::kernels(three);
    CHECK(k.total_ns == doctest::Approx(costmatrix::kernels(one).total_ns));
    CHECK(k.rows[0].calls == 2);  // gemm: twice per call
    CHECK(k.rows[0].min_ns == 300);
  }

  TEST_CASE("an op that ran in only some of the calls still shows one call") {
    trace::Trace t;
    t.calls = 10;
    t.ops = {op("aten::empty", -1, 0, 1000)};
    const auto rows = costmatrix::build(t);
    CHECK(rows[0].calls == 1);
    CHECK(rows[0].cpu_total_ns == 100);
  }

  TEST_CASE("a call the scheduler stretched is left out of the per-call figures") {
    // Four calls of one op: 100, 100, 400 (preempted) and 120 ns of wall time.
    trace::Trace t;
    t.calls = 4;
    t.call_starts = {0, 100, 200, 600};
    t.end_ns = 720;
    t.ops = {op("attnprof::attention", -1, 0, 100), op("attnprof::attention", -1, 100, 200),
             op("attnprof::attention", -1, 200, 600), op("attnprof::attention", -1, 600, 720)};
    CHECK(costmatrix::kept_calls(t) == std::vector<bool>{true, true, false, true});
    const auto rows = costmatrix::build(t);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].calls == 1);
    CHECK(rows[0].cpu_total_ns == doctest::Approx(320.0 / 3));
    // Within 1.5 times the median every call counts.
    t.call_starts = {0, 100, 200, 350};
    t.end_ns = 470;
    CHECK(costmatrix::kept_calls(t) == std::vector<bool>(4, true));
    // A call far faster than the median ran in another state of the machine: left out too.
    // Calls of 300, 300, 100 and 310 ns (median 300): 100 is over 1.5 times off.
    t.call_starts = {0, 300, 600, 700};
    t.end_ns = 1010;
    CHECK(costmatrix::kept_calls(t) == std::vector<bool>{true, true, false, true});
    // 200 is within 1.5 times: kept.
    t.call_starts = {0, 300, 600, 800};
    t.end_ns = 1110;
    CHECK(costmatrix::kept_calls(t) == std::vector<bool>(4, true));
    // No call boundaries recorded: every op counts, divided by t.calls.
    t.call_starts.clear();
    CHECK(costmatrix::kept_calls(t).empty());
  }

  TEST_CASE("a pass's median call, and whether it ran in the samples' state of the machine") {
    trace::Trace t;
    t.calls = 4;
    t.call_starts = {0, 100, 200, 600};
    t.end_ns = 720;
    CHECK(costmatrix::call_walls(t) == std::vector<double>{100, 100, 400, 120});
    CHECK(costmatrix::median_call_ns(t) == 100);  // the lower median, as kept_calls uses
    // Half the calls preempted: the median is a fast call's, like the kept calls.
    t.call_starts = {0, 100, 5'100, 5'200, 10'200, 10'300};
    t.end_ns = 15'300;
    CHECK(costmatrix::median_call_ns(t) == 100);
    CHECK(costmatrix::kept_calls(t) == std::vector<bool>{true, false, true, false, true, false});
    t.call_starts.clear();
    CHECK(costmatrix::median_call_ns(t) == 0);
    // Within 1.25x either way of the measured median: the same state.
    CHECK(costmatrix::same_state(110, 100));
    CHECK(costmatrix::same_state(125, 100));
    CHECK_FALSE(costmatrix::same_state(126, 100));
    CHECK(costmatrix::same_state(100, 124));
    CHECK_FALSE(costmatrix::same_state(100, 126));
    CHECK_FALSE(costmatrix::same_state(9'000, 100));  // a pass in a slow state
    // Nothing to judge by: no call boundaries, or no median.
    CHECK(costmatrix::same_state(0, 100));
    CHECK(costmatrix::same_state(110, 0));
  }

  TEST_CASE("what a case ran: op names on the CPU, kernel names on a GPU, a set either way") {
    auto row = [](std::string op, std::vector<std::pair<std::string, int>> kernels = {},
                  int calls = 1, std::string shapes = "") {
      core::CostRow r;
      r.op = std::move(op);
      r.kernels = std::move(kernels);
      r.calls = calls;
      r.input_shapes = std::move(shapes);
      return r;
    };
    const std::vector<core::CostRow> a{row("aten::softmax"), row("aten::bmm", {}, 2, "[[1]]"),
                                       row("aten::bmm", {}, 1, "[[2]]"),
                                       row(std::string(costmatrix::kNoOp))};
    const std::vector<core::CostRow> b{row("aten::bmm", {}, 7), row("aten::softmax", {}, 3)};
    CHECK(costmatrix::kernel_set(a, false) ==
          std::vector<std::string>{"aten::bmm", "aten::softmax"});
    // Another order, other counts, other shapes: the same set.
    CHECK(costmatrix::kernel_set(a, false) == costmatrix::kernel_set(b, false));
    // Outermost first: an op before the ops it calls, whatever their names.
    std::vector<core::CostRow> nested{row("aten::mm"), row("aten::zeta")};
    nested[0].parent = "aten::matmul";
    nested.push_back(row("aten::matmul"));
    nested.back().parent = "aten::zeta";
    CHECK(costmatrix::kernel_set(nested, false) ==
          std::vector<std::string>{"aten::zeta", "aten::matmul", "aten::mm"});
    std::vector<core::CostRow> gpu{row("aten::bmm", {{"gemm", 2}, {"gemm", 1}}),
                                   row("aten::softmax", {{"softmax_warp", 1}}),
                                   row("aten::mm", {{"a_gemm", 1}})};
    gpu[2].parent = "aten::bmm";  // its kernel is listed after the top level's
    CHECK(costmatrix::kernel_set(gpu, true) ==
          std::vector<std::string>{"gemm", "softmax_warp", "a_gemm"});
    // A GPU case traced without its device: unknown, not "ran nothing".
    CHECK_FALSE(costmatrix::kernel_set(b, true).has_value());
  }
}
