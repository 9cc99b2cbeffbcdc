// trace::record on real ATen ops on the CPU: op names, nesting, shapes and dtypes, self vs total
// time, memory per op, and (with CUPTI built) kernel-to-op mapping through a fake device tracer
// that answers each pushed external id with a packed CUPTI kernel record.
#include <ATen/record_function.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "harness/costmatrix/cost_matrix.h"
#include "tests/skip.h"
#include "tests/torch/torch_doctest.h"
#include "worker/trace/tracer.h"

#ifdef ATTNPROF_HAVE_CUPTI
#include <cstring>
#include <mutex>

#include "worker/trace/cupti_tracer.h"
#endif

using namespace attnprof;

namespace {

std::vector<std::size_t> find_ops(const trace::Trace& t, const std::string& name) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    if (t.ops[i].name == name) out.push_back(i);
  return out;
}

// Tensor-scalar ops (x * 2) call the tensor-tensor overload, nested under the same name: count
// only the outermost.
std::vector<std::size_t> top_ops(const trace::Trace& t, const std::string& name) {
  std::vector<std::size_t> out;
  for (auto i : find_ops(t, name))
    if (t.ops[i].parent < 0) out.push_back(i);
  return out;
}

bool descends_from(const trace::Trace& t, std::size_t i, const std::string& ancestor) {
  for (auto a = t.ops[i].parent; a >= 0; a = t.ops[a].parent)
    if (t.ops[a].name == ancestor) return true;
  return false;
}

std::vector<std::size_t> g_mm_inputs;
std::unique_ptr<at::ObserverContext> observe_mm_inputs(const at::RecordFunction& fn) {
  if (std::string_view(fn.name()) == "aten::mm") g_mm_inputs.push_back(fn.inputs().size());
  return nullptr;
}

}  // namespace

TEST_SUITE("trace::Tracer") {
  TEST_CASE("records ATen ops with shapes, dtypes, nesting and times") {
    const auto q = at::randn({1, 2, 8, 4});
    const auto k = at::randn({1, 2, 8, 4});
    const auto t = trace::record([&] { (void)at::matmul(q, k.transpose(-2, -1)).softmax(-1); },
                                 trace::Options{});
    const auto matmuls = find_ops(t, "aten::matmul");
    REQUIRE(matmuls.size() == 1);
    const auto& mm = t.ops[matmuls[0]];
    CHECK(mm.input_shapes == "[[1, 2, 8, 4], [1, 2, 4, 8]]");
    CHECK(mm.input_dtypes == "[float, float]");
    CHECK(mm.parent == -1);
    CHECK(mm.end_ns >= mm.start_ns);
    // matmul on 4-d inputs goes through bmm, nested under it.
    const auto bmms = find_ops(t, "aten::bmm");
    REQUIRE_FALSE(bmms.empty());
    CHECK(descends_from(t, bmms[0], "aten::matmul"));
    const auto& bmm = t.ops[bmms[0]];
    CHECK(bmm.start_ns >= mm.start_ns);
    CHECK(bmm.end_ns <= mm.end_ns);
    const auto softmax = find_ops(t, "aten::softmax");
    REQUIRE(softmax.size() == 1);
    CHECK(t.ops[softmax[0]].input_shapes == "[[1, 2, 8, 8], [], []]");
    CHECK(t.ops[softmax[0]].input_dtypes == "[float, Int, None]");
    CHECK(t.start_ns <= mm.start_ns);
    CHECK(t.end_ns >= t.ops[softmax[0]].end_ns);
    CHECK_FALSE(t.device_traced);
  }

  TEST_CASE("the cost matrix from a real trace: self <= total, children inside parents") {
    const auto a = at::randn({64, 64});
    const auto t = trace::record([&] { (void)at::matmul(a, a).relu(); }, trace::Options{});
    const auto rows = costmatrix::build(t);
    REQUIRE_FALSE(rows.empty());
    double self = 0;
    for (const auto& r : rows) {
      CHECK(r.cpu_self_ns <= r.cpu_total_ns);
      CHECK(r.calls >= 1);
      self += r.cpu_self_ns;
    }
    // Self times partition the top-level ops' time, less the tracer's own time inside them.
    double top = 0;
    for (const auto& op : t.ops)
      if (op.parent < 0) top += double(op.end_ns - op.start_ns) - double(op.tracer_ns);
    CHECK(self == doctest::Approx(top));
  }

  TEST_CASE("the tracer's time inside a parent is measured, and several calls are per call") {
    const auto a = at::randn({32, 32});
    trace::Options options;
    options.calls = 3;
    const auto t = trace::record(
        [&] {
          RECORD_USER_SCOPE("attnprof::attention");
          (void)at::matmul(a, a).relu();
        },
        options);
    CHECK(t.calls == 3);
    REQUIRE(t.call_starts.size() == 3);
    CHECK(std::is_sorted(t.call_starts.begin(), t.call_starts.end()));
    const auto scopes = find_ops(t, "attnprof::attention");
    REQUIRE(scopes.size() == 3);
    for (auto i : scopes) {
      const auto& scope = t.ops[i];
      // Its children's callbacks (input descriptions, the lock) ran inside its window.
      CHECK(scope.tracer_ns > 0);
      CHECK(scope.tracer_ns < scope.end_ns - scope.start_ns);
    }
    const auto rows = costmatrix::build(t);
    for (const auto& r : rows)
      if (r.op == "attnprof::attention") CHECK(r.calls == 1);
  }

  TEST_CASE("user scopes appear as ops and parent what runs inside them") {
    const auto x = at::randn({4, 4});
    const auto t = trace::record(
        [&] {
          RECORD_USER_SCOPE("attnprof::attention");
          (void)(x + x);
        },
        trace::Options{});
    const auto scopes = find_ops(t, "attnprof::attention");
    REQUIRE(scopes.size() == 1);
    const auto adds = find_ops(t, "aten::add");
    REQUIRE(adds.size() == 1);
    CHECK(t.ops[adds[0]].parent == static_cast<std::int64_t>(scopes[0]));
    CHECK(costmatrix::share_of(t, "attnprof::attention") == doctest::Approx(1.0));
  }

  TEST_CASE("an op that ends before an op inside it, or on another thread, keeps its place") {
    trace::Options options;
    options.calls = 1;
    options.warmup_calls = 0;
    const auto t = trace::record(
        [] {
          at::RecordFunction outer(at::RecordScope::USER_SCOPE);
          outer.before("test::outer");
          at::RecordFunction inner(at::RecordScope::USER_SCOPE);
          inner.before("test::inner");
          outer.end();  // while test::inner is still open
          { RECORD_USER_SCOPE("test::in_inner"); }
          inner.end();
          { RECORD_USER_SCOPE("test::after"); }
          at::RecordFunction moved(at::RecordScope::USER_SCOPE);
          moved.before("test::moved");
          std::thread([&] { moved.end(); }).join();
        },
        options);
    const auto one = [&](const char* name) {
      const auto found = find_ops(t, name);
      REQUIRE(found.size() == 1);
      return found[0];
    };
    const auto outer = one("test::outer"), inner = one("test::inner");
    const auto in_inner = one("test::in_inner"), after = one("test::after");
    const auto moved = one("test::moved");
    CHECK(t.ops[outer].parent == -1);
    CHECK(t.ops[inner].parent == static_cast<std::int64_t>(outer));
    CHECK(t.ops[in_inner].parent == static_cast<std::int64_t>(inner));
    CHECK(t.ops[after].parent == -1);  // both closed, out of order
    CHECK(t.ops[moved].parent == -1);
    for (const auto i : {outer, inner, in_inner, after, moved}) {
      CAPTURE(t.ops[i].name);
      CHECK(t.ops[i].end_ns >= t.ops[i].start_ns);
      CHECK(t.ops[i].end_ns > 0);
    }
    CHECK(t.ops[outer].end_ns <= t.ops[in_inner].start_ns);
    CHECK(t.ops[inner].end_ns >= t.ops[in_inner].end_ns);
  }

  TEST_CASE("memory: bytes allocated per op and the peak") {
    const auto x = at::randn({256, 256});  // 256 KiB of float
    const auto t = trace::record(
        [&] {
          auto y = x * 2;  // allocates 256 KiB
          auto z = y + 1;  // another 256 KiB while y is alive
          (void)z;
        },
        trace::Options{});
    const auto muls = top_ops(t, "aten::mul");
    REQUIRE(muls.size() == 1);
    // The allocation happens in the innermost op (the tensor-tensor mul) and is attributed there.
    std::int64_t mul_bytes = 0;
    for (auto i : find_ops(t, "aten::mul")) mul_bytes += t.ops[i].bytes_allocated;
    CHECK(mul_bytes >= 256 * 256 * 4);
    CHECK(mul_bytes < 2 * 256 * 256 * 4);
    REQUIRE(t.peak_bytes.count("cpu") == 1);
    CHECK(t.peak_bytes.at("cpu") >= 2 * 256 * 256 * 4);
    // y and z are freed at the end of the body, outside any op.
    std::int64_t freed = 0;
    for (const auto& m : t.memory)
      if (m.bytes < 0) freed += -m.bytes;
    CHECK(freed >= 2 * 256 * 256 * 4);
  }

  TEST_CASE("every timed call's ops get shapes and memory from the description call") {
    const auto a = at::randn({16, 8});
    const auto b = at::randn({8, 32});
    trace::Options options;
    options.calls = 3;
    int calls = 0;
    // A second observer sees the inputs LibTorch boxed for each aten::mm: none in the warm-up
    // call and the timed calls, both in the description call, which comes last.
    g_mm_inputs.clear();
    const auto observer = at::addGlobalCallback(
        at::RecordFunctionCallback(&observe_mm_inputs).scopes({at::RecordScope::FUNCTION}));
    const auto t = trace::record(
        [&] {
          ++calls;
          (void)at::mm(a, b).relu();
        },
        options);
    at::removeCallback(observer);
    CHECK(calls == 1 + 3 + 1);
    CHECK(g_mm_inputs == std::vector<std::size_t>{0, 0, 0, 0, 2});
    const auto mms = find_ops(t, "aten::mm");
    REQUIRE(mms.size() == 3);  // the timed calls' only: the description call adds no ops
    for (auto i : mms) {
      CHECK(t.ops[i].input_shapes == "[[16, 8], [8, 32]]");
      CHECK(t.ops[i].input_dtypes == "[float, float]");
      CHECK(t.ops[i].bytes_allocated >= 16 * 32 * 4);
    }
    // The memory events point at ops of the first timed call.
    REQUIRE_FALSE(t.memory.empty());
    for (const auto& m : t.memory)
      if (m.op >= 0) CHECK(t.ops[m.op].start_ns < t.call_starts.at(1));
    CHECK(t.notes.empty());
  }

  TEST_CASE(
      "ops without a counterpart in the description call keep no shapes, and a note says so") {
    const auto x = at::randn({4});
    trace::Options options;
    options.calls = 2;
    int calls = 0;
    const auto t = trace::record(
        [&] {
          (void)(x + 1);
          if (calls++ == 1) (void)x.neg();  // only the first timed call (call 0: the warm-up)
        },
        options);
    const auto negs = find_ops(t, "aten::neg");
    REQUIRE(negs.size() == 1);
    CHECK(t.ops[negs[0]].input_shapes.empty());
    for (auto i : top_ops(t, "aten::add")) CHECK(t.ops[i].input_shapes == "[[4], [], []]");
    REQUIRE(t.notes.size() == 1);
    CHECK(t.notes[0].rfind("1 of ", 0) == 0);
    CHECK(t.notes[0].find("no counterpart in the call that recorded shapes and memory") !=
          std::string::npos);
  }

  TEST_CASE("an op that ran in one call only does not shift its namesakes elsewhere in the tree") {
    // Each call negates a [4] and then an [8] tensor; the first timed call also negates a [2]
    // tensor inside a scope before them. Matched by the place in the op tree, the [4] and [8]
    // negations keep their shapes in every call; the scope and its negation have no counterpart.
    const auto a = at::randn({4}), b = at::randn({8}), c = at::randn({2});
    trace::Options options;
    options.calls = 2;
    int calls = 0;
    const auto t = trace::record(
        [&] {
          if (calls++ == 1) {
            RECORD_USER_SCOPE("attnprof::first");
            (void)c.neg();
          }
          (void)a.neg();
          (void)b.neg();
        },
        options);
    std::vector<std::string> shapes;
    for (auto i : top_ops(t, "aten::neg")) shapes.push_back(t.ops[i].input_shapes);
    CHECK(shapes == std::vector<std::string>{"[[4]]", "[[8]]", "[[4]]", "[[8]]"});
    const auto scoped = find_ops(t, "aten::neg");
    REQUIRE(scoped.size() == 5);
    CHECK(t.ops[scoped[0]].parent >= 0);
    CHECK(t.ops[scoped[0]].input_shapes.empty());
    REQUIRE(t.notes.size() == 1);
    CHECK(t.notes[0].rfind("2 of ", 0) == 0);
  }

  TEST_CASE("shapes and memory off: no description call") {
    const auto x = at::randn({4});
    trace::Options options;
    options.calls = 2;
    options.shapes = false;
    options.memory = false;
    int calls = 0;
    const auto t = trace::record(
        [&] {
          ++calls;
          (void)(x + 1);
        },
        options);
    CHECK(calls == 1 + 2);  // the warm-up call and the timed ones
    for (auto i : top_ops(t, "aten::add")) CHECK(t.ops[i].input_shapes.empty());
  }

  TEST_CASE("the warm-up calls are traced and dropped: the trace holds the timed calls only") {
    const auto x = at::randn({4});
    for (const int warmup : {0, 1, 2}) {
      CAPTURE(warmup);
      trace::Options options;
      options.calls = 2;
      options.warmup_calls = warmup;
      int calls = 0;
      const auto t = trace::record(
          [&] {
            RECORD_USER_SCOPE("attnprof::call");
            if (calls++ < warmup) (void)x.neg();  // the warm-up calls only
            (void)(x + 1);
          },
          options);
      CHECK(calls == warmup + 2 + 1);
      CHECK(find_ops(t, "aten::neg").empty());
      const auto scopes = find_ops(t, "attnprof::call");
      REQUIRE(scopes.size() == 2);
      REQUIRE(t.call_starts.size() == 2);
      CHECK(scopes[0] == 0);  // numbered from the first timed call
      for (std::size_t c = 0; c < 2; ++c) CHECK(t.ops[scopes[c]].start_ns >= t.call_starts[c]);
      for (std::size_t i = 0; i < t.ops.size(); ++i) {
        const auto& op = t.ops[i];
        CHECK(op.end_ns >= op.start_ns);
        CHECK(op.start_ns >= t.start_ns);
        // Parents index the kept ops; the adds hang under their call's scope.
        REQUIRE(op.parent >= -1);
        if (op.parent >= 0) CHECK(static_cast<std::size_t>(op.parent) < i);
        if (op.name == "aten::add") CHECK(op.parent >= 0);
      }
      for (const auto s : scopes) {
        std::size_t adds = 0;
        for (const auto& op : t.ops)
          if (op.parent == static_cast<std::int64_t>(s) && op.name == "aten::add") {
            ++adds;
            CHECK(op.input_shapes == "[[4], [], []]");  // from the description call still
          }
        CHECK(adds == 1);
      }
      CHECK(t.notes.empty());
    }
  }

  TEST_CASE("times are steady-clock nanoseconds, whatever clock the pass read") {
    // On x86-64 with the kernel's clocksource "tsc" the pass reads the TSC and converts; a wrong
    // conversion puts the window outside the steady-clock readings around record() or makes a
    // 30 ms scope shorter than 30 ms.
    const auto steady = [] {
      return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::steady_clock::now().time_since_epoch())
                                            .count());
    };
    trace::Options options;
    options.calls = 2;
    const std::uint64_t before = steady();
    const auto t = trace::record(
        [&] {
          RECORD_USER_SCOPE("attnprof::sleep");
          std::this_thread::sleep_for(std::chrono::milliseconds(30));
        },
        options);
    const std::uint64_t after = steady();
    CHECK(before <= t.start_ns);
    CHECK(t.end_ns <= after);
    const auto scopes = find_ops(t, "attnprof::sleep");
    REQUIRE(scopes.size() == 2);
    for (auto i : scopes) {
      const auto& op = t.ops[i];
      CHECK(op.end_ns - op.start_ns >= 30'000'000u);
      CHECK(t.start_ns <= op.start_ns);
      CHECK(op.end_ns <= t.end_ns);
    }
    CHECK(t.end_ns - t.start_ns >= 60'000'000u);
  }

  TEST_CASE("memory off: no reports") {
    const auto x = at::randn({64, 64});
    trace::Options o;
    o.memory = false;
    const auto t = trace::record([&] { (void)(x * 2); }, o);
    CHECK(t.memory.empty());
    CHECK(t.peak_bytes.empty());
    CHECK_FALSE(find_ops(t, "aten::mul").empty());
  }

  TEST_CASE("callbacks are removed afterwards, also when the body throws") {
    const auto x = at::randn({4});
    CHECK_THROWS_AS(trace::record([] { throw std::runtime_error("boom"); }, trace::Options{}),
                    std::runtime_error);
    CHECK_FALSE(at::hasGlobalCallbacks());
    auto t = trace::record([&] { (void)(x + 1); }, trace::Options{});
    CHECK(top_ops(t, "aten::add").size() == 1);
    // No global RecordFunction callback is left behind (no one else adds any in this binary).
    CHECK_FALSE(at::hasGlobalCallbacks());
  }

  TEST_CASE("without a GPU, device tracing is not run and the trace says why") {
    std::string why;
    if (trace::device_tracing_available(&why)) {
      tests::report_skip("a GPU machine: tests/device covers device tracing");
      return;
    }
    trace::Options o;
    o.device = true;
    o.hardware_counters = true;
    const auto x = at::randn({4});
    const auto t = trace::record([&] { (void)(x + 1); }, o);
    CHECK_FALSE(t.device_traced);
    CHECK(t.device.empty());
    REQUIRE(t.notes.size() == 2);
    CHECK(t.notes[0] == why + ": device tracing not run");
    CHECK(t.notes[1] == why + ": hardware counters not collected");
    CHECK(why.rfind("no GPU", 0) == 0);
  }

#ifdef ATTNPROF_HAVE_CUPTI
  // Answers each pushed external id with one kernel record, as CUPTI would after a launch inside
  // that op, and hands them back through the same buffer walk the real tracer uses.
  class FakeDevice final : public trace::DeviceTracer {
   public:
    void start() override { started = true; }
    void push_external_id(std::uint64_t id) noexcept override {
      std::lock_guard lock(m);
      stack.push_back(id);
      ++corr;
      CUpti_ActivityExternalCorrelation x;
      std::memset(&x, 0, sizeof x);
      x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
      x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
      x.externalId = id;
      x.correlationId = corr;
      put(x);
      CUpti_ActivityKernel10 k;
      std::memset(&k, 0, sizeof k);
      k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      k.name = "fake_kernel";
      k.correlationId = corr;
      k.start = 1000 * corr;
      k.end = 1000 * corr + 10;
      k.gridX = k.gridY = k.gridZ = 1;
      k.blockX = 32;
      k.blockY = k.blockZ = 1;
      put(k);
    }
    void pop_external_id() noexcept override {
      std::lock_guard lock(m);
      if (!stack.empty())
        stack.pop_back();
      else
        ++unbalanced;
    }
    std::uint64_t timestamp_ns() noexcept override { return ++clock; }
    trace::DeviceRecords stop() override {
      trace::DeviceRecords r;
      trace::process_buffer(reinterpret_cast<std::uint8_t*>(words.data()), size, r);
      r.resolve();
      return r;
    }
    template <class T>
    void put(const T& rec) {
      const std::size_t at = (size + 7) & ~std::size_t{7};
      words.resize((at + sizeof(T) + 7) / 8);
      std::memcpy(reinterpret_cast<std::uint8_t*>(words.data()) + at, &rec, sizeof(T));
      size = at + sizeof(T);
    }
    std::mutex m;
    std::vector<std::uint64_t> stack;
    std::vector<std::uint64_t> words;
    std::size_t size = 0;
    std::uint32_t corr = 0;
    std::uint64_t clock = 0;
    int unbalanced = 0;
    bool started = false;
  };

  TEST_CASE("each kernel maps to the op whose external id was pushed; push and pop balance") {
    FakeDevice dev;
    const auto a = at::randn({8, 8});
    const auto t = trace::record([&] { (void)at::mm(a, a).relu(); }, trace::Options{}, &dev);
    CHECK(dev.started);
    CHECK(dev.stack.empty());
    CHECK(dev.unbalanced == 0);
    CHECK(t.device_traced);
    // One fake kernel per op; the warm-up call's kernels went with its ops.
    CHECK(dev.corr > t.ops.size());
    REQUIRE(t.device.size() == t.ops.size());
    for (const auto& d : t.device) {
      REQUIRE(d.op >= 0);
      CHECK(t.ops[d.op].external_id == d.external_id);
    }
    const auto rows = costmatrix::build(t);
    for (const auto& r : rows) {
      CHECK(r.launches == r.calls);
      CHECK(r.device_self_ns == doctest::Approx(10.0 * r.calls));
      const std::vector<std::pair<std::string, int>> expected{{"fake_kernel", r.calls}};
      CHECK(r.kernels == expected);
    }
    // CPU timestamps came from the device tracer's clock.
    CHECK(t.start_ns >= 1);
    CHECK(t.end_ns <= dev.clock);
  }
#endif
}
