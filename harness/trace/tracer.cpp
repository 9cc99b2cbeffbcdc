// The CPU tracer and the record() session (tracer.h). The only translation unit of the trace
// stage that includes LibTorch headers.
//
// How it hangs together: record() publishes a Session, adds one global RecordFunction callback
// pair and installs a memory reporter in this thread's PROFILER_STATE debug-info slot. The enter
// callback appends a raw op to its thread's own buffer (parent = top of this thread's op stack),
// takes the op's index from one atomic counter (so indices are the global enter order) and
// pushes the op's external id to the device tracer; exit stamps the end and pops. Timestamps are
// taken last on enter and first on exit, so the tracer's own bookkeeping stays out of the op's
// time as far as it can.
//
// What keeps the overhead down (bench/bench_torch_trace measures it against untraced passes):
// no lock and no string building while the body runs. Each thread appends to buffers that only
// it touches, reserved ahead; input shapes go in as numbers and dtype and kind names as bytes
// in an arena; the text torch.profiler shows ("[[1, 2, 8, 4], []]") and the per-op memory
// totals are built once, after the body, when the buffers are merged into the Trace.
#include "harness/trace/tracer.h"

#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string_view>

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

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// One input of an op as recorded: a tensor's dims (in ThreadBuffer::dims) and dtype name, or
// the kind of a non-tensor input; names in ThreadBuffer::text.
struct RawInput {
  enum Kind : std::uint8_t { tensor, undefined_tensor, other };
  Kind kind = other;
  std::uint32_t ndim = 0, dims = 0;      // tensor: its sizes at dims[dims, dims + ndim)
  std::uint32_t text = 0, text_len = 0;  // dtype name (tensor) or IValue kind (other)
};

struct RawOp {
  std::uint64_t index = 0;  // in Trace::ops: the global enter order
  std::int64_t parent = -1;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t name = 0, name_len = 0;    // in ThreadBuffer::text
  std::uint32_t inputs = 0, n_inputs = 0;  // in ThreadBuffer::inputs
  std::int64_t bytes_allocated = 0, bytes_freed = 0;
  std::uint64_t tracer_ns = 0;  // the tracer's own time inside this op's window
};

struct RawMemory {
  std::uint64_t at_ns = 0;
  std::int64_t bytes = 0;
  c10::Device device{c10::kCPU};
  std::int64_t op = -1;
};

// An op that ended on another thread than the one it started on (async ops): applied at the
// merge, so no thread ever writes into another thread's buffer.
struct ForeignEnd {
  std::uint64_t index = 0, end_ns = 0;
};

// What one thread recorded in one session. Only that thread writes it while the body runs.
struct ThreadBuffer {
  std::uint32_t number = 0;  // 0: the thread that called record()
  std::vector<RawOp> ops;
  std::vector<RawInput> inputs;
  std::vector<std::int64_t> dims;
  std::string text;
  std::vector<RawMemory> memory;
  std::vector<ForeignEnd> foreign_ends;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> stack;  // open ops: (index, slot in ops)

  explicit ThreadBuffer(std::uint32_t n) : number(n) {
    // Enough for a kernel or block pass without growing; kept small (under glibc's 128 KiB
    // mmap threshold each) because these are made and freed on every traced pass.
    ops.reserve(256);
    inputs.reserve(1024);
    dims.reserve(4096);
    text.reserve(8192);
    memory.reserve(256);
    stack.reserve(64);
  }

  std::uint32_t add_text(std::string_view s) {
    const auto at = static_cast<std::uint32_t>(text.size());
    text.append(s);
    return at;
  }
  std::string_view text_at(std::uint32_t at, std::uint32_t len) const {
    return std::string_view(text).substr(at, len);
  }
};

struct ThreadSlot {
  std::uint64_t generation = 0;
  ThreadBuffer* buffer = nullptr;
};
thread_local ThreadSlot t_slot;

struct OpContext : at::ObserverContext {
  std::uint64_t generation = 0;
  ThreadBuffer* owner = nullptr;
  std::uint64_t index = 0;
  std::uint32_t slot = 0;  // in owner->ops
};

// torch.profiler's record_shapes format: one entry per input, [] for non-tensors.
void format_inputs(const ThreadBuffer& b, const RawOp& op, std::string& shapes,
                   std::string& dtypes) {
  shapes = "[";
  dtypes = "[";
  for (std::uint32_t i = 0; i < op.n_inputs; ++i) {
    if (i) {
      shapes += ", ";
      dtypes += ", ";
    }
    const RawInput& in = b.inputs[op.inputs + i];
    if (in.kind == RawInput::tensor) {
      shapes += '[';
      for (std::uint32_t d = 0; d < in.ndim; ++d) {
        if (d) shapes += ", ";
        shapes += std::to_string(b.dims[in.dims + d]);
      }
      shapes += ']';
      dtypes += b.text_at(in.text, in.text_len);
    } else {
      shapes += "[]";
      dtypes += in.kind == RawInput::undefined_tensor ? std::string_view("undefined")
                                                      : b.text_at(in.text, in.text_len);
    }
  }
  shapes += "]";
  dtypes += "]";
}

class Session {
 public:
  Session(DeviceTracer* device, bool memory) : m_device(device), m_memory(memory) {}

  std::uint64_t now() const {
#ifdef ATTNPROF_HAVE_CUPTI
    if (m_device) return m_device->timestamp_ns();
#endif
    return steady_ns();
  }

  // This thread's buffer, made on its first op or allocation in this session (under the lock:
  // once per thread, never per op).
  ThreadBuffer& buffer() {
    if (t_slot.generation == m_generation) return *t_slot.buffer;
    std::lock_guard lock(m_mutex);
    m_buffers.push_back(
        std::make_unique<ThreadBuffer>(static_cast<std::uint32_t>(m_buffers.size())));
    t_slot = {m_generation, m_buffers.back().get()};
    return *t_slot.buffer;
  }

  // The tracer's time inside every op open on this thread: its callbacks run inside their
  // ancestors' windows, and the cost matrix takes that time out of their self and total times.
  static void charge(ThreadBuffer& b, std::size_t open_ops, std::uint64_t ns) {
    for (std::size_t i = 0; i < open_ops && i < b.stack.size(); ++i)
      b.ops[b.stack[i].second].tracer_ns += ns;
  }

  std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction& fn) {
    const std::uint64_t entered = now();
    ThreadBuffer& b = buffer();
    const std::size_t ancestors = b.stack.size();
    RawOp op;
    op.index = m_next_op.fetch_add(1, std::memory_order_relaxed);
    op.parent = b.stack.empty() ? -1 : static_cast<std::int64_t>(b.stack.back().first);
    const std::string_view name = fn.name();
    op.name = b.add_text(name);
    op.name_len = static_cast<std::uint32_t>(name.size());
    const auto inputs = fn.inputs();
    op.inputs = static_cast<std::uint32_t>(b.inputs.size());
    op.n_inputs = static_cast<std::uint32_t>(inputs.size());
    for (const c10::IValue& v : inputs) {
      RawInput in;
      if (v.isTensor()) {
        const at::Tensor& t = v.toTensor();
        if (t.defined()) {
          in.kind = RawInput::tensor;
          const auto sizes = t.sizes();
          in.ndim = static_cast<std::uint32_t>(sizes.size());
          in.dims = static_cast<std::uint32_t>(b.dims.size());
          b.dims.insert(b.dims.end(), sizes.begin(), sizes.end());
          const std::string_view dtype = t.dtype().name();
          in.text = b.add_text(dtype);
          in.text_len = static_cast<std::uint32_t>(dtype.size());
        } else {
          in.kind = RawInput::undefined_tensor;
        }
      } else {
        // Short names ("Int", "None", "GenericList") stay in std::string's inline buffer.
        const std::string kind = v.isTensorList() ? std::string("TensorList") : v.tagKind();
        in.text = b.add_text(kind);
        in.text_len = static_cast<std::uint32_t>(kind.size());
      }
      b.inputs.push_back(in);
    }
    const auto slot = static_cast<std::uint32_t>(b.ops.size());
    b.stack.emplace_back(op.index, slot);
#ifdef ATTNPROF_HAVE_CUPTI
    if (m_device) m_device->push_external_id(op.index + 1);
#endif
    auto ctx = std::make_unique<OpContext>();
    ctx->generation = m_generation;
    ctx->owner = &b;
    ctx->index = op.index;
    ctx->slot = slot;
    b.ops.push_back(op);
    const std::uint64_t started = now();
    b.ops.back().start_ns = started;
    charge(b, ancestors, started - entered);
    return ctx;
  }

  void exit(at::ObserverContext* c) {
    const std::uint64_t t = now();
    auto* ctx = static_cast<OpContext*>(c);
    if (!ctx || ctx->generation != m_generation) return;
#ifdef ATTNPROF_HAVE_CUPTI
    if (m_device) m_device->pop_external_id();
#endif
    ThreadBuffer& b = buffer();
    if (ctx->owner == &b)
      b.ops[ctx->slot].end_ns = t;
    else
      b.foreign_ends.push_back({ctx->index, t});
    // Async ops may end on another thread; only this thread's own stack is touched.
    auto& stack = b.stack;
    if (!stack.empty() && stack.back().first == ctx->index) {
      stack.pop_back();
    } else {
      auto it = std::find_if(stack.rbegin(), stack.rend(),
                             [&](const auto& e) { return e.first == ctx->index; });
      if (it != stack.rend()) stack.erase(std::next(it).base());
    }
    charge(b, stack.size(), now() - t);
  }

  void memory(std::int64_t bytes, const c10::Device& device) {
    const std::uint64_t t = now();
    ThreadBuffer& b = buffer();
    const std::int64_t op = b.stack.empty() ? -1 : static_cast<std::int64_t>(b.stack.back().first);
    b.memory.push_back(RawMemory{t, bytes, device, op});
    charge(b, b.stack.size(), now() - t);
  }

  void begin() {
    m_generation = g_generation.fetch_add(1) + 1;
    buffer();  // the calling thread is thread 0
    g_session.store(this, std::memory_order_release);
  }
  void end() {
    g_session.store(nullptr, std::memory_order_release);
  }

  // After the body: every thread's ops in enter order with their text, memory events in time
  // order with each device's running total and peak, bytes per op.
  void move_into(Trace& t) {
    std::lock_guard lock(m_mutex);
    t.ops.assign(m_next_op.load(), OpEvent{});
    for (const auto& b : m_buffers)
      for (const RawOp& raw : b->ops) {
        OpEvent& op = t.ops[raw.index];
        op.name = b->text_at(raw.name, raw.name_len);
        format_inputs(*b, raw, op.input_shapes, op.input_dtypes);
        op.parent = raw.parent;
        op.start_ns = raw.start_ns;
        op.end_ns = raw.end_ns;
        op.tracer_ns = raw.tracer_ns;
        op.thread = b->number;
        op.external_id = raw.index + 1;
      }
    std::vector<const RawMemory*> memory;
    for (const auto& b : m_buffers) {
      for (const ForeignEnd& e : b->foreign_ends) t.ops[e.index].end_ns = e.end_ns;
      for (const RawMemory& m : b->memory) memory.push_back(&m);
    }
    std::stable_sort(memory.begin(), memory.end(),
                     [](const RawMemory* x, const RawMemory* y) { return x->at_ns < y->at_ns; });
    std::map<std::string, std::int64_t> current;
    for (const RawMemory* m : memory) {
      const std::string dev = m->device.str();
      auto& cur = current[dev];
      cur += m->bytes;
      auto& peak = t.peak_bytes[dev];
      peak = std::max(peak, cur);
      if (m->op >= 0) {
        if (m->bytes >= 0)
          t.ops[m->op].bytes_allocated += m->bytes;
        else
          t.ops[m->op].bytes_freed += -m->bytes;
      }
      t.memory.push_back(MemoryEvent{m->at_ns, m->bytes, dev, m->op});
    }
  }

  bool memory_enabled() const {
    return m_memory;
  }

 private:
  DeviceTracer* m_device;
  bool m_memory;
  std::uint64_t m_generation = 0;
  std::atomic<std::uint64_t> m_next_op{0};
  std::mutex m_mutex;  // m_buffers
  std::vector<std::unique_ptr<ThreadBuffer>> m_buffers;
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
    t.start_ns = session.now();
    t.calls = std::max(1, options.calls);
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
