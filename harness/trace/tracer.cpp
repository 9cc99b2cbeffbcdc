// The CPU tracer and the record() session (tracer.h). The only translation unit of the trace
// stage that includes LibTorch headers.
//
// How it hangs together: record() publishes a Session, adds one global RecordFunction callback
// pair and installs a memory reporter in this thread's PROFILER_STATE debug-info slot. The enter
// callback appends an OpEvent (parent = top of this thread's op stack) and pushes the op's
// external id to the device tracer; exit stamps the end and pops. Timestamps are taken last on
// enter and first on exit, so the tracer's own bookkeeping stays out of the op's own window; the
// time a child's callbacks spend inside its ancestors' windows is measured and charged to each
// open ancestor's tracer_ns, which the cost matrix subtracts (without it, every traced child
// would add its input description and lock to the parent's self time).
#include "harness/trace/tracer.h"

#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>

#ifdef ATTNPROF_HAVE_CUPTI
#include "harness/trace/counters.h"
#include "harness/trace/cupti_tracer.h"
#endif
#include "harness/util/error.h"

namespace attnprof::trace {

#ifndef ATTNPROF_HAVE_CUPTI
// Without CUPTI there is no DeviceTracer implementation; the type stays incomplete and only
// null pointers are ever passed.
bool device_tracing_available(std::string* why_not) {
  if (why_not) *why_not = "built without CUDA (ATTNPROF_CUDA=OFF)";
  return false;
}
#endif

namespace {

class Session;
std::atomic<Session*> g_session{nullptr};
std::atomic<std::uint64_t> g_generation{0};

struct ThreadState {
  std::uint64_t generation = 0;
  std::uint32_t number = 0;
  std::vector<std::int64_t> stack;  // indices of the ops open on this thread
  std::vector<OpEvent*> open;       // the same ops (deque elements never move)
};

// The tracer's time inside every op open on this thread.
void charge(ThreadState& ts, std::size_t open_ops, std::uint64_t ns) {
  for (std::size_t i = 0; i < open_ops && i < ts.open.size(); ++i) ts.open[i]->tracer_ns += ns;
}
thread_local ThreadState t_state;

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

void append_shape(std::string& out, c10::IntArrayRef sizes) {
  out += '[';
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(sizes[i]);
  }
  out += ']';
}

// torch.profiler's record_shapes format: one entry per input, [] for non-tensors.
void describe_inputs(c10::ArrayRef<const c10::IValue> inputs, std::string& shapes,
                     std::string& dtypes) {
  shapes = "[";
  dtypes = "[";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i) {
      shapes += ", ";
      dtypes += ", ";
    }
    const auto& v = inputs[i];
    if (v.isTensor()) {
      const auto& t = v.toTensor();
      if (t.defined()) {
        append_shape(shapes, t.sizes());
        dtypes += std::string(t.dtype().name());
      } else {
        shapes += "[]";
        dtypes += "undefined";
      }
    } else {
      shapes += "[]";
      dtypes += v.isTensorList() ? "TensorList" : v.tagKind();
    }
  }
  shapes += "]";
  dtypes += "]";
}

struct OpContext : at::ObserverContext {
  std::uint64_t generation = 0;
  std::int64_t index = -1;
};

class Session {
 public:
  Session(DeviceTracer* device, bool memory) : m_device(device), m_memory(memory) {}

  std::uint64_t now() const {
#ifdef ATTNPROF_HAVE_CUPTI
    if (m_device) return m_device->timestamp_ns();
#endif
    return steady_ns();
  }

  ThreadState& thread_state() {
    if (t_state.generation != m_generation) {
      t_state.generation = m_generation;
      t_state.number = m_threads.fetch_add(1);
      t_state.stack.clear();
      t_state.open.clear();
    }
    return t_state;
  }

  std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction& fn) {
    const std::uint64_t entered = now();
    auto& ts = thread_state();
    std::string shapes, dtypes;
    describe_inputs(fn.inputs(), shapes, dtypes);
    OpEvent* op = nullptr;
    std::int64_t index = 0;
    {
      std::lock_guard lock(m_mutex);
      index = static_cast<std::int64_t>(m_ops.size());
      op = &m_ops.emplace_back();  // deque: the reference stays valid as others append
    }
    op->name = fn.name();
    op->input_shapes = std::move(shapes);
    op->input_dtypes = std::move(dtypes);
    op->parent = ts.stack.empty() ? -1 : ts.stack.back();
    op->thread = ts.number;
    op->external_id = static_cast<std::uint64_t>(index) + 1;
    const std::size_t ancestors = ts.stack.size();
    ts.stack.push_back(index);
    ts.open.push_back(op);
#ifdef ATTNPROF_HAVE_CUPTI
    if (m_device) m_device->push_external_id(op->external_id);
#endif
    auto ctx = std::make_unique<OpContext>();
    ctx->generation = m_generation;
    ctx->index = index;
    op->start_ns = now();
    charge(ts, ancestors, op->start_ns - entered);
    return ctx;
  }

  void exit(at::ObserverContext* c) {
    const std::uint64_t t = now();
    auto* ctx = static_cast<OpContext*>(c);
    if (!ctx || ctx->generation != m_generation) return;
    OpEvent* op = nullptr;
    {
      std::lock_guard lock(m_mutex);
      op = &m_ops[ctx->index];
    }
    op->end_ns = t;
#ifdef ATTNPROF_HAVE_CUPTI
    if (m_device) m_device->pop_external_id();
#endif
    // Async ops may end on another thread; only this thread's own stack is touched.
    auto& ts = thread_state();
    auto& stack = ts.stack;
    if (!stack.empty() && stack.back() == ctx->index) {
      stack.pop_back();
      ts.open.pop_back();
    } else {
      auto it = std::find(stack.rbegin(), stack.rend(), ctx->index);
      if (it != stack.rend()) {
        const auto at = std::distance(stack.begin(), std::next(it).base());
        stack.erase(stack.begin() + at);
        ts.open.erase(ts.open.begin() + at);
      }
    }
    charge(ts, ts.open.size(), now() - t);
  }

  void memory(std::int64_t bytes, const c10::Device& device) {
    const std::uint64_t t = now();
    auto& ts = thread_state();
    const std::int64_t op = ts.stack.empty() ? -1 : ts.stack.back();
    struct Charge {  // on every way out, after the lock is released
      Session& s;
      ThreadState& ts;
      std::uint64_t from;
      ~Charge() { charge(ts, ts.open.size(), s.now() - from); }
    } charged{*this, ts, t};
    std::lock_guard lock(m_mutex);
    const std::string dev = device.str();
    m_memory_events.push_back(MemoryEvent{t, bytes, dev, op});
    auto& cur = m_current[dev];
    cur += bytes;
    auto& peak = m_peak[dev];
    peak = std::max(peak, cur);
    if (op >= 0) {
      if (bytes >= 0)
        m_ops[op].bytes_allocated += bytes;
      else
        m_ops[op].bytes_freed += -bytes;
    }
  }

  void begin() {
    m_generation = g_generation.fetch_add(1) + 1;
    g_session.store(this, std::memory_order_release);
  }
  void end() {
    g_session.store(nullptr, std::memory_order_release);
  }

  void move_into(Trace& t) {
    std::lock_guard lock(m_mutex);
    t.ops.assign(std::make_move_iterator(m_ops.begin()), std::make_move_iterator(m_ops.end()));
    t.memory = std::move(m_memory_events);
    t.peak_bytes = std::move(m_peak);
  }

  bool memory_enabled() const {
    return m_memory;
  }

 private:
  DeviceTracer* m_device;
  bool m_memory;
  std::uint64_t m_generation = 0;
  std::atomic<std::uint32_t> m_threads{0};
  std::mutex m_mutex;
  std::deque<OpEvent> m_ops;
  std::vector<MemoryEvent> m_memory_events;
  std::map<std::string, std::int64_t> m_current, m_peak;
};

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  Session* s = g_session.load(std::memory_order_acquire);
  return s ? s->enter(fn) : nullptr;
}

void on_exit(const at::RecordFunction&, at::ObserverContext* ctx) {
  Session* s = g_session.load(std::memory_order_acquire);
  if (s) s->exit(ctx);
}

// The allocators (CPU and CUDA caching) call this for every allocation and free while it sits
// in the thread's PROFILER_STATE slot.
class MemoryReporter final : public c10::MemoryReportingInfoBase {
 public:
  explicit MemoryReporter(Session* s) : m_session(s) {}
  void reportMemoryUsage(void* /*ptr*/, int64_t alloc_size, size_t /*total_allocated*/,
                         size_t /*total_reserved*/, c10::Device device) override {
    m_session->memory(alloc_size, device);
  }
  bool memoryProfilingEnabled() const override { return true; }

 private:
  Session* m_session;
};

// Removes the callback and unpublishes the session on every path out of record().
class Installed {
 public:
  explicit Installed(Session& s) : m_session(s) {
    if (g_session.load() != nullptr)
      throw util::EnvironmentError("trace::record is already running (it is not reentrant)");
    s.begin();
    m_handle = at::addGlobalCallback(
        at::RecordFunctionCallback(&on_enter, &on_exit)
            .needsInputs(true)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
  }
  ~Installed() {
    at::removeCallback(m_handle);
    m_session.end();
  }
  Installed(const Installed&) = delete;
  Installed& operator=(const Installed&) = delete;

 private:
  Session& m_session;
  at::CallbackHandle m_handle = 0;
};

}  // namespace

Trace record(const std::function<void()>& body, const Options& options, DeviceTracer* device) {
  Trace t;
  Session session(device, options.memory);
#ifdef ATTNPROF_HAVE_CUPTI
  if (device) device->start();
#endif
  {
    Installed installed(session);
    std::optional<c10::DebugInfoGuard> memory_guard;
    if (options.memory)
      memory_guard.emplace(c10::DebugInfoKind::PROFILER_STATE,
                           std::make_shared<MemoryReporter>(&session));
    t.calls = std::max(1, options.calls);
    t.start_ns = session.now();
    try {
      for (int i = 0; i < t.calls; ++i) {
        t.call_starts.push_back(session.now());
        body();
      }
    } catch (...) {
#ifdef ATTNPROF_HAVE_CUPTI
      if (device) {
        try {
          device->stop();
        } catch (...) {
        }
      }
#endif
      throw;
    }
    t.end_ns = session.now();
  }
  session.move_into(t);
#ifdef ATTNPROF_HAVE_CUPTI
  if (device) {
    DeviceRecords r = device->stop();
    t.device_traced = true;
    t.dropped_records = r.dropped;
    for (auto& n : r.notes) t.notes.push_back(std::move(n));
    auto op_of = [&](std::uint64_t external) -> std::int64_t {
      return external >= 1 && external <= t.ops.size() ? static_cast<std::int64_t>(external - 1)
                                                       : -1;
    };
    for (auto& d : r.device) d.op = op_of(d.external_id);
    for (auto& a : r.api) a.op = op_of(a.external_id);
    t.device = std::move(r.device);
    t.api = std::move(r.api);
  }
#else
  (void)device;
#endif
  return t;
}

Trace record(const std::function<void()>& body, const Options& options) {
  std::string why;
  const bool available =
      (options.device || options.hardware_counters) && device_tracing_available(&why);
  Trace t;
#ifdef ATTNPROF_HAVE_CUPTI
  std::unique_ptr<DeviceTracer> cupti;
  if (options.device && available) cupti = make_cupti_tracer();
  t = record(body, options, cupti.get());
#else
  t = record(body, options, nullptr);
#endif
  if (options.device && !available) t.notes.push_back(why + ": device tracing not run");
  if (options.hardware_counters) {
    if (!available) {
      t.notes.push_back(why + ": hardware counters not collected");
    } else {
#ifdef ATTNPROF_HAVE_CUPTI
      // A separate pass: the range profiler may replay the body, and must not share it with
      // activity tracing.
      try {
        t.counters = measure_counters(body, default_counter_metrics());
        t.notes.push_back("hardware counters from a separate pass of the body");
      } catch (const util::EnvironmentError& e) {
        t.notes.push_back(std::string("hardware counters not collected: ") + e.what());
      }
#endif
    }
  }
  return t;
}

}  // namespace attnprof::trace
