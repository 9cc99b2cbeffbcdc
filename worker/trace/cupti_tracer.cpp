// CuptiTracer (cupti_tracer.h): buffers, enabling, flushing and dropped-record counting for
// CUPTI's Activity API, following CUPTI's activity_trace_async sample and kineto's
// CuptiActivityApi.cpp. Only the Activity API is used: no cuptiSubscribe, so torch's own Kineto
// (never enabled by attnprof) is not locked out for later runs in other processes.
#include "worker/trace/cupti_tracer.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "harness/util/error.h"

namespace attnprof::trace {

std::string cupti_error_string(CUptiResult rc) {
  const char* s = nullptr;
  if (cuptiGetResultString(rc, &s) != CUPTI_SUCCESS || !s)
    return fmt::format("CUPTI error {}", int(rc));
  return s;
}

#define ATTNPROF_CUPTI_CHECK(call)                                                            \
  do {                                                                                        \
    const CUptiResult rc_ = (call);                                                           \
    if (rc_ != CUPTI_SUCCESS)                                                                 \
      throw util::EnvironmentError(                                                           \
          fmt::format("{}: {} ({}:{})", #call, cupti_error_string(rc_), __FILE__, __LINE__)); \
  } while (0)

namespace {

// The loaded libcupti against our headers, asked once per process.
const std::optional<std::string>& loaded_cupti_problem() {
  static const std::optional<std::string> problem = []() -> std::optional<std::string> {
    std::uint32_t version = 0;
    const CUptiResult rc = cuptiGetVersion(&version);
    if (rc != CUPTI_SUCCESS) return "cuptiGetVersion: " + cupti_error_string(rc);
    return cupti_version_problem(version, CUPTI_API_VERSION);
  }();
  return problem;
}

}  // namespace

bool device_tracing_available(std::string* why_not) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    if (why_not) *why_not = fmt::format("no GPU: cudaGetDeviceCount: {}", cudaGetErrorString(rc));
    cudaGetLastError();  // clear the sticky-free error so later runtime calls are not confused
    return false;
  }
  if (count == 0) {
    if (why_not) *why_not = "no GPU: cudaGetDeviceCount found no CUDA device";
    return false;
  }
  // With a device present, asking libcupti its version is safe (and needs no context).
  if (auto problem = loaded_cupti_problem()) {
    if (why_not) *why_not = *problem;
    return false;
  }
  return true;
}

std::optional<std::string> cupti_version_problem(std::uint32_t runtime, std::uint32_t headers) {
  // Since CUDA 13 the API version reads major * 10000 + minor * 100 + patch (130001). Record
  // layouts change between majors (12.x has other struct versions); a patch release of the same
  // major keeps them, and refusing one would cost the GPU figures for nothing.
  const std::uint32_t major_floor = headers / 10000 * 10000;
  if (runtime >= std::min(headers, major_floor)) return std::nullopt;
  return fmt::format(
      "libcupti reports API version {}, older than the version {} attnprof was built with: its "
      "activity records would be misread (use the CUPTI of the CUDA toolkit attnprof was built "
      "with, or a newer one)",
      runtime, headers);
}

namespace {

void check_cupti_version() {
  if (auto problem = loaded_cupti_problem()) throw util::EnvironmentError(*problem);
}

constexpr std::size_t kBufferBytes = 4u << 20;  // kineto's size; 8-byte aligned as CUPTI wants

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,  // not KIND_KERNEL: that one serializes kernels
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,  // cuDNN/cuBLAS may launch through the driver API
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};

class CuptiTracer;
// CUPTI's buffer callbacks are plain functions; they reach the active tracer through this.
std::atomic<CuptiTracer*> g_active{nullptr};

class CuptiTracer final : public DeviceTracer {
 public:
  ~CuptiTracer() override {
    if (m_started) {
      // stop() was not reached (an exception in the body): leave CUPTI quiet.
      for (auto k : kKinds) cuptiActivityDisable(k);
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      g_active.store(nullptr);
    }
  }

  void start() override {
    check_cupti_version();
    CuptiTracer* expected = nullptr;
    if (!g_active.compare_exchange_strong(expected, this))
      throw util::EnvironmentError("CUPTI activity tracing is already active in this process");
    try {
      ATTNPROF_CUPTI_CHECK(cuptiActivityRegisterCallbacks(&on_request, &on_complete));
      for (auto k : kKinds) ATTNPROF_CUPTI_CHECK(cuptiActivityEnable(k));
      m_started = true;
      // Anything CUPTI buffered before this pass (e.g. from a previous session) is not ours.
      ATTNPROF_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
      std::lock_guard lock(m_mutex);
      m_records = DeviceRecords{};
    } catch (...) {
      for (auto k : kKinds) cuptiActivityDisable(k);
      m_started = false;
      g_active.store(nullptr);
      throw;
    }
  }

  void push_external_id(std::uint64_t id) noexcept override {
    if (cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) !=
        CUPTI_SUCCESS)
      m_push_errors.fetch_add(1, std::memory_order_relaxed);
  }

  void pop_external_id() noexcept override {
    std::uint64_t last = 0;
    if (cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last) !=
        CUPTI_SUCCESS)
      m_push_errors.fetch_add(1, std::memory_order_relaxed);
  }

  std::uint64_t timestamp_ns() noexcept override {
    std::uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
  }

  DeviceRecords stop() override { return drain(true); }
  DeviceRecords collect() override { return drain(false); }

 private:
  DeviceRecords drain(bool disable) {
    // FlushAll does not wait for the device; kernels still running would be missing.
    const cudaError_t sync = cudaDeviceSynchronize();
    // The completion callback takes m_mutex, so the flush runs without holding it.
    const CUptiResult flush = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (disable) {
      for (auto k : kKinds) cuptiActivityDisable(k);
      m_started = false;
      g_active.store(nullptr);
    }
    if (sync != cudaSuccess)
      throw util::EnvironmentError(fmt::format("cudaDeviceSynchronize: {} ({}:{})",
                                               cudaGetErrorString(sync), __FILE__, __LINE__));
    if (flush != CUPTI_SUCCESS)
      throw util::EnvironmentError(fmt::format("cuptiActivityFlushAll: {} ({}:{})",
                                               cupti_error_string(flush), __FILE__, __LINE__));
    std::lock_guard lock(m_mutex);
    DeviceRecords out = std::move(m_records);
    m_records = DeviceRecords{};
    out.resolve();
    if (const auto errors = m_push_errors.exchange(0))
      out.notes.push_back(fmt::format(
          "{} CUPTI external-correlation push/pop calls failed: some kernels may show no op",
          errors));
    if (!m_buffer_error.empty()) out.notes.push_back(m_buffer_error);
    if (out.dropped)
      out.notes.push_back(
          fmt::format("CUPTI dropped {} activity records (buffers full)", out.dropped));
    return out;
  }

  static void CUPTIAPI on_request(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_records) {
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;  // as many as fit
  }

  static void CUPTIAPI on_complete(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
                                   std::size_t /*size*/, std::size_t valid) {
    CuptiTracer* self = g_active.load();
    if (self) {
      std::lock_guard lock(self->m_mutex);
      try {
        process_buffer(buffer, valid, self->m_records);
      } catch (const std::exception& e) {
        // Never let an exception cross into CUPTI; report it with the trace.
        self->m_buffer_error = e.what();
      }
      std::size_t dropped = 0;
      if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        self->m_records.dropped += dropped;
    }
    std::free(buffer);
  }

  std::mutex m_mutex;
  DeviceRecords m_records;
  std::string m_buffer_error;
  std::atomic<std::uint64_t> m_push_errors{0};
  bool m_started = false;
};

}  // namespace

std::unique_ptr<DeviceTracer> make_cupti_tracer() {
  return std::make_unique<CuptiTracer>();
}

}  // namespace attnprof::trace
