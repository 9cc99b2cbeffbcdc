// The CPU tracer and the record() session (tracer.h). The only translation unit of the trace
// stage that includes LibTorch headers.
//
// How it hangs together: record() runs the body in two sessions. The timed one (options.calls
// calls after options.warmup_calls whose ops and device records are dropped at the merge, CUPTI
// around it where a GPU is traced) records names, nesting and times; the
// description call after it (one call) also boxes every op's inputs and reports memory, and its
// shapes, dtypes and bytes go to the timed ops by counterpart (the same place in the call's op
// tree: copy_description). A session publishes itself, adds one global RecordFunction callback
// pair and, for the description call, installs a memory reporter in this thread's PROFILER_STATE
// debug-info slot. The enter callback appends a raw op to its thread's own buffer (parent = the
// thread's innermost open op; the open ops are a chain through the raw ops), takes the op's index
// from one atomic counter (so indices are the global enter order) and pushes the op's external id
// to the device tracer; exit finds the op by the RecordFunction's handle (the innermost open one,
// but for async ops), stamps the end and reopens its parent. Timestamps are taken last on enter
// and first on exit, so the tracer's own bookkeeping stays out of the op's time as far as it can,
// and the rest is measured (a running total per thread) and taken out by the cost matrix.
//
// What keeps the overhead of the timed calls down (bench/bench_torch_trace measures it against
// untraced calls): no lock, no allocation (past the buffers' reserve) and no string building
// while the body runs; no boxing of inputs and no memory reports (the description call has
// them, after the timed calls, since what it leaves in the caches slows the calls that follow
// it); a clock that is one instruction (the TSC, where the kernel keeps time with it). Each
// thread appends to buffers that only it touches, reserved ahead; names go into an arena; the
// text torch.profiler shows ("[[1, 2, 8, 4], []]") and the per-op memory totals are built once,
// after the body.
#include "worker/trace/tracer.h"

#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <tuple>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#ifdef ATTNPROF_HAVE_CUPTI
#include "worker/trace/counters.h"
#include "worker/trace/cupti_tracer.h"
#endif
#include "harness/core/clock.h"
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
  return static_cast<std::uint64_t>(core::steady_ns());
}

// The clock of a session without CUPTI. A pass reads its clock four times per op, and the steady
// clock (clock_gettime through the vDSO) costs two to three times more inside a pass of large
// ops than between tiny ones: the ops' own data evicts the vDSO's. The TSC is one instruction
// and reads no memory. It is used only where the kernel keeps time with it itself (clocksource
// "tsc": a constant rate, synchronized across CPUs); the readings are turned into steady-clock
// nanoseconds after the body, from steady-clock readings taken beside the TSC when the session
// begins and ends.
bool tsc_clock_usable() {
#if defined(__x86_64__)
  std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  return static_cast<bool>(f >> source) && source == "tsc";
#else
  return false;
#endif
}

// What tsc_clock_usable() last said: -1 not read yet, else 0 or 1. Read on first use and again
// after each pass's timed calls (record()), not before them: the file's system calls would
// otherwise run just before the timed calls, and what they leave behind slows them. The kernel's
// watchdog may find the TSC unstable and switch clocks; the session then running converts its TSC
// readings as usual (the TSC still counts), and the next one reads the steady clock.
std::atomic<int> g_tsc_clock{-1};
bool tsc_clock_in_use() {
  int known = g_tsc_clock.load(std::memory_order_relaxed);
  if (known < 0) {
    known = tsc_clock_usable() ? 1 : 0;
    g_tsc_clock.store(known, std::memory_order_relaxed);
  }
  return known == 1;
}

std::uint64_t tsc_now() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;
#endif
}

// A steady-clock reading and the TSC at the same moment: the steady reading taken between two
// TSC reads, paired with their midpoint, from the closest of a few tries (an interrupt between
// the reads would otherwise be spread over every time the session converts).
struct ClockPair {
  std::uint64_t tsc = 0, ns = 0;
};
ClockPair clock_pair() {
  ClockPair best;
  std::uint64_t best_gap = ~std::uint64_t{0};
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t before = tsc_now();
    const std::uint64_t ns = steady_ns();
    const std::uint64_t after = tsc_now();
    if (after - before < best_gap) {
      best_gap = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

// One input of an op as recorded: a tensor's dims (in ThreadBuffer::dims) and dtype, or the
// kind of a non-tensor input (its name in ThreadBuffer::text).
struct RawInput {
  enum Kind : std::uint8_t { tensor, undefined_tensor, other };
  Kind kind = other;
  c10::ScalarType dtype = c10::ScalarType::Undefined;  // tensor: named at the merge
  std::uint32_t ndim = 0, dims = 0;      // tensor: its sizes at dims[dims, dims + ndim)
  std::uint32_t text = 0, text_len = 0;  // other: the IValue's kind
};

constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};

struct RawOp {
  std::uint64_t index = 0;  // in Trace::ops: the global enter order
  std::int64_t parent = -1;
  // The op that was open on this thread when this one started (its slot in ThreadBuffer::ops,
  // kNoSlot at the top): the thread's open ops are a chain through these, innermost first.
  std::uint32_t parent_slot = kNoSlot;
  // An op inside it stayed open past its end (closed on another thread, or never): this op then
  // took its place in the chain, and parent_slot no longer names `parent`.
  bool relinked = false;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t name = 0, name_len = 0;    // in ThreadBuffer::text
  std::uint32_t inputs = 0, n_inputs = 0;  // in ThreadBuffer::inputs
  at::RecordFunctionHandle handle = 0;  // the RecordFunction's, to place an end on another thread
  // The thread's running total of tracer time (ThreadBuffer::tracer_ns) when the op started and
  // when it ended: their difference is the tracer's own time inside the op's window.
  std::uint64_t tracer_at_start = 0, tracer_at_end = 0;
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
  at::RecordFunctionHandle handle = 0;
  std::uint64_t end_ns = 0;
};

// What one thread recorded in one session. Only that thread writes it while the body runs.
// The callbacks run right after an op's kernel has filled the caches with its data, so every
// line they touch is likely a miss: what they use per op is kept together at the front (exit
// needs the first line only, enter the first two).
struct alignas(64) ThreadBuffer {
  // The tracer's own time on this thread so far in this session (callbacks, memory reports).
  // Each op reads it when it starts and ends, so charging it is O(1) however deep the nesting.
  std::uint64_t tracer_ns = 0;
  // The innermost op open on this thread: its index and its slot in ops (-1 and kNoSlot: none).
  // Exit closes it and reopens its parent_slot; no stack of its own to touch.
  std::int64_t open_index = -1;
  std::uint32_t open_slot = kNoSlot;
  std::uint32_t number = 0;  // 0: the thread that called record()
  std::vector<RawOp> ops;
  std::string text;
  std::vector<RawInput> inputs;
  std::vector<std::int64_t> dims;
  std::vector<RawMemory> memory;
  std::vector<ForeignEnd> foreign_ends;

  explicit ThreadBuffer(std::uint32_t n) : number(n) {
    // Enough for ten calls of a kernel or block case without growing; kept under glibc's
    // 128 KiB mmap threshold each because these are made and freed on every traced pass.
    ops.reserve(1024);
    inputs.reserve(1024);
    dims.reserve(4096);
    text.reserve(32768);
    memory.reserve(256);
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
      dtypes += c10::scalarTypeToTypeMeta(in.dtype).name();
    } else {
      shapes += "[]";
      dtypes += in.kind == RawInput::undefined_tensor ? std::string_view("undefined")
                                                      : b.text_at(in.text, in.text_len);
    }
  }
  shapes += "]";
  dtypes += "]";
}

class alignas(64) Session {
 public:
  Session(DeviceTracer* device, bool inputs)
      : m_device(device),
        m_inputs(inputs),
        m_tsc(device == nullptr && tsc_clock_in_use()) {}

  // A reading of the session's clock: nanoseconds (CUPTI's clock, or the steady clock), or TSC
  // ticks that to_ns() converts once the session has ended.
  std::uint64_t now() const {
#ifdef ATTNPROF_HAVE_CUPTI
    if (m_device) [[unlikely]]
      return m_device->timestamp_ns();
#endif
    return m_tsc ? tsc_now() : steady_ns();
  }
  // A reading of now() in nanoseconds; valid after end().
  std::uint64_t to_ns(std::uint64_t reading) const {
    if (!m_tsc) return reading;
    const double ticks = static_cast<double>(static_cast<std::int64_t>(reading - m_tsc0));
    return m_ns0 + static_cast<std::uint64_t>(std::llround(std::max(0.0, ticks * m_ns_per_tick)));
  }
  // A difference of two readings in nanoseconds; valid after end().
  std::uint64_t duration_ns(std::uint64_t readings) const {
    return m_tsc ? static_cast<std::uint64_t>(std::llround(double(readings) * m_ns_per_tick))
                 : readings;
  }

  // This thread's buffer, made on its first op or allocation in this session (under the lock:
  // once per thread, never per op). What runs once per thread or only in the description call
  // (new_buffer, record_inputs) is kept out of line, so the timed calls' callbacks are short
  // straight code (on_enter 1.5 KB instead of 5 KB).
  ThreadBuffer& buffer() {
    if (t_slot.generation == m_generation) [[likely]]
      return *t_slot.buffer;
    return new_buffer();
  }
  [[gnu::noinline, gnu::cold]] ThreadBuffer& new_buffer() {
    std::lock_guard lock(m_mutex);
    m_buffers.push_back(
        std::make_unique<ThreadBuffer>(static_cast<std::uint32_t>(m_buffers.size())));
    t_slot = {m_generation, m_buffers.back().get()};
    return *t_slot.buffer;
  }

  // The exit callback finds its op among this thread's open ops by the RecordFunction's handle, so
  // no per-op context is allocated (LibTorch calls exit callbacks whether or not enter returned
  // one).
  std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction& fn) {
    const std::uint64_t entered = now();
    ThreadBuffer& b = buffer();
    const auto slot = static_cast<std::uint32_t>(b.ops.size());
    // Built whole rather than zeroed and then filled: GCC zeroes an 80-byte record with
    // `rep stos`, a microcoded start-up on every op.
    const std::uint64_t index = m_next_op.fetch_add(1, std::memory_order_relaxed);
    RawOp& op = b.ops.emplace_back(
        RawOp{.index = index, .parent = b.open_index, .parent_slot = b.open_slot});
    const std::string_view name = fn.name();
    op.name = b.add_text(name);
    op.name_len = static_cast<std::uint32_t>(name.size());
    // Inputs only where the callback asked for them (the description call, Options::shapes).
    if (m_inputs) record_inputs(b, op, fn.inputs());
    op.handle = fn.handle();
    b.open_slot = slot;
    b.open_index = static_cast<std::int64_t>(index);
#ifdef ATTNPROF_HAVE_CUPTI
    if (m_device) m_device->push_external_id(op.index + 1);
#endif
    const std::uint64_t started = now();
    op.start_ns = started;
    b.tracer_ns += started - entered;
    op.tracer_at_start = b.tracer_ns;
    return nullptr;
  }

  // The op's boxed inputs: a tensor's dims and dtype, or the kind of anything else.
  [[gnu::noinline, gnu::cold]] static void record_inputs(ThreadBuffer& b, RawOp& op,
                                                         c10::ArrayRef<const c10::IValue> inputs) {
    op.inputs = static_cast<std::uint32_t>(b.inputs.size());
    op.n_inputs = static_cast<std::uint32_t>(inputs.size());
    for (const c10::IValue& v : inputs) {
      RawInput& in = b.inputs.emplace_back();
      if (v.isTensor()) {
        const at::Tensor& t = v.toTensor();
        if (t.defined()) {
          in.kind = RawInput::tensor;
          const auto sizes = t.sizes();
          in.ndim = static_cast<std::uint32_t>(sizes.size());
          in.dims = static_cast<std::uint32_t>(b.dims.size());
          b.dims.insert(b.dims.end(), sizes.begin(), sizes.end());
          in.dtype = t.scalar_type();
        } else {
          in.kind = RawInput::undefined_tensor;
        }
      } else {
        // Short names ("Int", "None", "GenericList") stay in std::string's inline buffer.
        const std::string kind = v.isTensorList() ? std::string("TensorList") : v.tagKind();
        in.text = b.add_text(kind);
        in.text_len = static_cast<std::uint32_t>(kind.size());
      }
    }
  }

  void exit(const at::RecordFunction& fn) {
    const std::uint64_t t = now();
    ThreadBuffer& b = buffer();
    const at::RecordFunctionHandle handle = fn.handle();
    // Almost always the innermost open op; an op whose start this thread did not see (an async
    // op started elsewhere, or one that began before the session) is placed at the merge.
    std::uint32_t slot = b.open_slot, inner = kNoSlot;
    while (slot != kNoSlot && b.ops[slot].handle != handle) {
      inner = slot;
      slot = b.ops[slot].parent_slot;
    }
    if (slot != kNoSlot) {
#ifdef ATTNPROF_HAVE_CUPTI
      if (m_device) m_device->pop_external_id();
#endif
      RawOp& op = b.ops[slot];
      op.end_ns = t;
      op.tracer_at_end = b.tracer_ns;
      if (inner == kNoSlot) [[likely]] {
        b.open_slot = op.parent_slot;
        b.open_index = !op.relinked ? op.parent
                       : op.parent_slot == kNoSlot
                           ? -1
                           : static_cast<std::int64_t>(b.ops[op.parent_slot].index);
      } else {
        RawOp& still_open = b.ops[inner];
        still_open.parent_slot = op.parent_slot;
        still_open.relinked = true;
      }
    } else {
      b.foreign_ends.push_back({handle, t});
    }
    b.tracer_ns += now() - t;
  }

  void memory(std::int64_t bytes, const c10::Device& device) {
    const std::uint64_t t = now();
    ThreadBuffer& b = buffer();
    const std::int64_t op = b.open_index;
    b.memory.push_back(RawMemory{t, bytes, device, op});
    b.tracer_ns += now() - t;
  }

  void begin() {
    m_generation = g_generation.fetch_add(1) + 1;
    buffer();  // the calling thread is thread 0
    if (m_tsc) {
      const ClockPair p = clock_pair();
      m_ns0 = p.ns;
      m_tsc0 = p.tsc;
    }
    g_session.store(this, std::memory_order_release);
  }
  void end() {
    g_session.store(nullptr, std::memory_order_release);
    if (m_tsc) {
      const ClockPair p = clock_pair();
      m_ns_per_tick = p.tsc > m_tsc0 ? double(p.ns - m_ns0) / double(p.tsc - m_tsc0) : 0.0;
    }
  }

  // How many ops have been entered so far: the first index of the ops entered from now on.
  std::uint64_t ops_entered() const { return m_next_op.load(); }

  // After the body: every thread's ops in enter order with their text, memory events in time
  // order with each device's running total and peak, bytes per op. The ops entered before
  // `first` (the warm-up calls') are left out, and the rest numbered from 0.
  void move_into(Trace& t, std::uint64_t first = 0) {
    std::lock_guard lock(m_mutex);
    const std::uint64_t entered = m_next_op.load();
    t.ops.assign(entered > first ? entered - first : 0, OpEvent{});
    const auto place = [&](std::uint64_t index) -> std::optional<std::size_t> {
      // A callback still running on another thread when the session ended (removing a
      // callback does not wait for it) took an index past the count read above.
      if (index < first || index >= entered) return std::nullopt;
      return static_cast<std::size_t>(index - first);
    };
    for (const auto& b : m_buffers)
      for (const RawOp& raw : b->ops) {
        const auto at = place(raw.index);
        if (!at) continue;
        OpEvent& op = t.ops[*at];
        op.name = b->text_at(raw.name, raw.name_len);
        if (m_inputs) format_inputs(*b, raw, op.input_shapes, op.input_dtypes);
        // A parent among the dropped ops (an op of a warm-up call still open: async) leaves the
        // op at the top.
        const auto parent = raw.parent >= 0 ? place(static_cast<std::uint64_t>(raw.parent))
                                            : std::nullopt;
        op.parent = parent ? static_cast<std::int64_t>(*parent) : -1;
        op.start_ns = to_ns(raw.start_ns);
        op.end_ns = raw.end_ns == 0 ? 0 : to_ns(raw.end_ns);
        // An op still open at the end (or ended on another thread) has no end reading.
        op.tracer_ns = raw.tracer_at_end >= raw.tracer_at_start
                           ? duration_ns(raw.tracer_at_end - raw.tracer_at_start)
                           : 0;
        op.thread = b->number;
        op.external_id = raw.index + 1;  // as pushed to the device tracer
      }
    std::vector<const RawMemory*> memory;
    std::map<at::RecordFunctionHandle, std::size_t> open;  // handle -> index, ops not ended
    for (const auto& b : m_buffers) {
      for (const RawOp& raw : b->ops)
        if (const auto at = place(raw.index); at && raw.end_ns == 0) open.emplace(raw.handle, *at);
    }
    for (const auto& b : m_buffers) {
      for (const ForeignEnd& e : b->foreign_ends)
        if (auto it = open.find(e.handle); it != open.end())
          t.ops[it->second].end_ns = to_ns(e.end_ns);
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
      const auto at = m->op >= 0 ? place(static_cast<std::uint64_t>(m->op)) : std::nullopt;
      const std::int64_t op = at ? static_cast<std::int64_t>(*at) : -1;
      if (op >= 0) {
        if (m->bytes >= 0)
          t.ops[op].bytes_allocated += m->bytes;
        else
          t.ops[op].bytes_freed += -m->bytes;
      }
      t.memory.push_back(MemoryEvent{to_ns(m->at_ns), m->bytes, dev, op});
    }
  }

  // The body's window and call starts, read with now() by record(), in nanoseconds.
  void convert_window(Trace& t) const {
    t.start_ns = to_ns(t.start_ns);
    t.end_ns = to_ns(t.end_ns);
    for (auto& at : t.call_starts) at = to_ns(at);
  }

  bool inputs_enabled() const {
    return m_inputs;
  }

 private:
  DeviceTracer* m_device;
  bool m_inputs;
  bool m_tsc;  // now() reads the TSC
  std::uint64_t m_tsc0 = 0, m_ns0 = 0;  // TSC and steady clock side by side at begin()
  double m_ns_per_tick = 0;             // from those and the same at end()
  std::uint64_t m_generation = 0;
  std::atomic<std::uint64_t> m_next_op{0};
  std::mutex m_mutex;  // m_buffers
  std::vector<std::unique_ptr<ThreadBuffer>> m_buffers;
};

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  Session* s = g_session.load(std::memory_order_acquire);
  return s ? s->enter(fn) : nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  Session* s = g_session.load(std::memory_order_acquire);
  if (s) s->exit(fn);
}

// The allocators (CPU and CUDA caching) call this for every allocation and free while it sits
// in the thread's PROFILER_STATE slot. What sits there must be a ProfilerStateBase: torch reads
// that slot as one (profilerEnabled, getProfilerConfig: a Python autograd.Function asks at every
// call, FlexAttention's eager path among them), and a bare MemoryReportingInfoBase read as one is
// garbage (std::bad_alloc thrown from the copy of a config that is not there). A profiler state
// whose config is "disabled" tells torch that no profiler runs, while the allocators still report.
class MemoryReporter final : public torch::profiler::impl::ProfilerStateBase {
 public:
  explicit MemoryReporter(Session* s)
      : ProfilerStateBase(torch::profiler::impl::ProfilerConfig(
            torch::profiler::impl::ProfilerState::Disabled)),
        m_session(s) {}
  torch::profiler::impl::ActiveProfilerType profilerType() override {
    return torch::profiler::impl::ActiveProfilerType::NONE;
  }
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
            .needsInputs(s.inputs_enabled())
            .needsIds(true)
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

// The description call: one call of body recorded with what the timed calls leave out, its ops'
// inputs (Options::shapes) and the allocator's reports (Options::memory). No device tracing.
Trace record_description_call(const std::function<void()>& body, const Options& options) {
  Trace t;
  Session session(nullptr, options.shapes);
  {
    Installed installed(session);
    std::optional<c10::DebugInfoGuard> memory_guard;
    if (options.memory)
      memory_guard.emplace(c10::DebugInfoKind::PROFILER_STATE,
                           std::make_shared<MemoryReporter>(&session));
    t.start_ns = session.now();
    t.call_starts.push_back(t.start_ns);
    body();
    t.end_ns = session.now();
  }
  session.move_into(t);
  session.convert_window(t);
  return t;
}

// Gives each op of the timed calls what its counterpart in the description call recorded. The
// counterpart has the same place in its call's op tree: the k-th op of the same name under the
// counterpart of the op's parent, or for a top-level op, the k-th of that name at the top of its
// thread. An op that runs in one call and not another then shifts only its siblings of the same
// name, not every later op of that name. The memory events move over too, each to the
// counterpart, in the first timed call, of the op it happened in. Ops without a counterpart
// (and so their descendants) keep empty shapes and no memory, and a note says how many.
void copy_description(Trace&& from, Trace& to) {
  // (parent's index, or -1 - call at the top level; thread at the top level, else 0; name)
  using Place = std::tuple<std::int64_t, std::uint32_t, std::string_view>;
  const auto thread_at_top = [](const OpEvent& op) { return op.parent < 0 ? op.thread : 0u; };
  std::map<Place, std::vector<std::size_t>> described;
  for (std::size_t i = 0; i < from.ops.size(); ++i) {
    const OpEvent& op = from.ops[i];
    described[{op.parent, thread_at_top(op), op.name}].push_back(i);
  }
  std::map<Place, std::size_t> seen;
  std::vector<std::int64_t> counterpart(to.ops.size(), -1);
  std::vector<std::int64_t> in_first_call(from.ops.size(), -1);
  std::size_t missing = 0;
  for (std::size_t i = 0; i < to.ops.size(); ++i) {
    OpEvent& op = to.ops[i];
    const std::size_t call = call_of(to, op.start_ns);
    const bool nested = op.parent >= 0 && static_cast<std::size_t>(op.parent) < i;
    const std::int64_t parent = nested ? counterpart[static_cast<std::size_t>(op.parent)] : -1;
    const std::uint32_t thread = thread_at_top(op);
    const std::size_t n =
        seen[{nested ? op.parent : -1 - static_cast<std::int64_t>(call), thread, op.name}]++;
    const auto it = described.find({parent, thread, op.name});
    if ((nested && parent < 0) || it == described.end() || n >= it->second.size()) {
      ++missing;
      continue;
    }
    const std::size_t j = it->second[n];
    counterpart[i] = static_cast<std::int64_t>(j);
    const OpEvent& d = from.ops[j];
    op.input_shapes = d.input_shapes;
    op.input_dtypes = d.input_dtypes;
    op.bytes_allocated = d.bytes_allocated;
    op.bytes_freed = d.bytes_freed;
    if (call == 0) in_first_call[j] = static_cast<std::int64_t>(i);
  }
  to.peak_bytes = std::move(from.peak_bytes);
  to.memory = std::move(from.memory);
  for (MemoryEvent& m : to.memory)
    if (m.op >= 0) m.op = in_first_call[static_cast<std::size_t>(m.op)];
  if (missing > 0)
    to.notes.push_back(std::to_string(missing) + " of " + std::to_string(to.ops.size()) +
                       " ops have no counterpart in the call that recorded shapes and memory (the "
                       "calls ran different ops): their shapes and memory are not recorded");
}

#ifdef ATTNPROF_HAVE_CUPTI
// The device tracer's records of the timed calls into the trace, each kernel, copy and API call
// given the op that launched it; the warm-up calls' records are dropped with their ops.
void attach_device_records(DeviceRecords&& r, std::uint64_t first, Trace& t) {
  t.device_traced = true;
  t.dropped_records = r.dropped;
  for (auto& n : r.notes) t.notes.push_back(std::move(n));
  // External ids are the ops' global indices + 1: the warm-up calls' are 1 to `first`, and
  // their records go with them.
  const auto warm_up = [&](std::uint64_t external) { return external >= 1 && external <= first; };
  std::erase_if(r.device, [&](const DeviceEvent& d) { return warm_up(d.external_id); });
  std::erase_if(r.api, [&](const ApiEvent& a) { return warm_up(a.external_id); });
  auto op_of = [&](std::uint64_t external) -> std::int64_t {
    return external > first && external - first <= t.ops.size()
               ? static_cast<std::int64_t>(external - first - 1)
               : -1;
  };
  for (auto& d : r.device) d.op = op_of(d.external_id);
  for (auto& a : r.api) a.op = op_of(a.external_id);
  t.device = std::move(r.device);
  t.api = std::move(r.api);
}
#endif

}  // namespace

Trace record(const std::function<void()>& body, const Options& options, DeviceTracer* device) {
  Trace t;
  Session session(device, false);
  std::uint64_t first = 0;  // the first op of the timed calls: those before are the warm-up's
#ifdef ATTNPROF_HAVE_CUPTI
  if (device) device->start();
#endif
  {
    Installed installed(session);
    t.calls = std::max(1, options.calls);
    try {
      for (int i = 0; i < options.warmup_calls; ++i) body();
      first = session.ops_entered();
      t.start_ns = session.now();
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
  if (device == nullptr) g_tsc_clock.store(tsc_clock_usable() ? 1 : 0, std::memory_order_relaxed);
  // Shapes and memory in a call of their own: boxing every op's inputs, reading them and
  // LibTorch's bookkeeping for memory reports cost as much as the rest of the tracer, and the
  // timed calls must not carry them. After the timed calls, not before: what that call leaves
  // behind in the caches and the allocator slows the next few calls.
#ifdef ATTNPROF_HAVE_CUPTI
  DeviceRecords records;
  if (device) records = device->stop();
#endif
  std::optional<Trace> description;
  if (options.shapes || options.memory) description = record_description_call(body, options);
  session.move_into(t, first);
  session.convert_window(t);
  if (description) copy_description(std::move(*description), t);
#ifdef ATTNPROF_HAVE_CUPTI
  if (device) attach_device_records(std::move(records), first, t);
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
