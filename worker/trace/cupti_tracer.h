// The device side of a traced pass. DeviceTracer is what the CPU tracer talks to (start, one
// external-correlation push/pop per op, stop); CuptiTracer is the one class in attnprof that
// calls CUPTI's Activity API. Tests replace it with a fake that feeds packed records through
// process_buffer (cupti_records.h), as kineto's tests do with MockCuptiActivities.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "worker/trace/cupti_records.h"

namespace attnprof::trace {

class DeviceTracer {
 public:
  virtual ~DeviceTracer() = default;
  // Registers buffers and enables the activity kinds; throws util::EnvironmentError on failure.
  virtual void start() = 0;
  // Called from RecordFunction callbacks on any thread, so they never throw; failures are
  // counted and reported by stop() as notes.
  virtual void push_external_id(std::uint64_t id) noexcept = 0;
  virtual void pop_external_id() noexcept = 0;
  // The clock device records use; CPU timestamps come from it so both line up.
  virtual std::uint64_t timestamp_ns() noexcept = 0;
  // Waits for the device, flushes every buffer, disables the kinds and returns what was recorded,
  // with external ids resolved.
  virtual DeviceRecords stop() = 0;
  // The same, but tracing stays on: what was recorded since start() or the last collect(). A
  // timer reads each batch of samples this way without enabling and disabling CUPTI each time.
  // By default a stop() and a new start().
  virtual DeviceRecords collect() {
    DeviceRecords r = stop();
    start();
    return r;
  }
};

// CUPTI Activity API tracer: CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME, DRIVER and
// EXTERNAL_CORRELATION, 4 MiB 8-byte-aligned buffers, dropped-record counts. Activity state is
// process-global in CUPTI, so only one CuptiTracer may be started at a time (a second start
// throws). Never construct one where device_tracing_available() is false.
std::unique_ptr<DeviceTracer> make_cupti_tracer();

// True when a CUDA device is present (cudaGetDeviceCount > 0) and the loaded libcupti is one
// whose records attnprof can read (cupti_version_problem). Otherwise false with the reason, e.g.
// "no GPU: cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version".
// Without a device it calls no CUPTI function: several crash without a driver.
bool device_tracing_available(std::string* why_not);

// Why CUPTI must not be used with this runtime library, or nullopt: records are read as the
// structs of the headers attnprof was built with (CUPTI_API_VERSION), and a libcupti of an older
// major version writes older, shorter records that would be misread. Within the headers' major
// version (an older patch level) and above, the layouts are the headers'.
std::optional<std::string> cupti_version_problem(std::uint32_t runtime, std::uint32_t headers);

// "CUPTI_ERROR_UNKNOWN" style text for a CUptiResult.
std::string cupti_error_string(CUptiResult rc);

}  // namespace attnprof::trace
