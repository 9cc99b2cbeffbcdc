// CUPTI activity records into the trace model. The code that reads a completed activity buffer
// lives here, apart from the code that asks CUPTI for buffers (cupti_tracer.h), so that tests
// pack real CUpti_Activity* structs into a buffer and drive exactly the path a GPU run takes
// (kineto's MockCuptiActivities idea).
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "harness/trace/model.h"

namespace attnprof::trace {

// Everything the device side of one pass produced.
struct DeviceRecords {
  std::vector<DeviceEvent> device;
  std::vector<ApiEvent> api;
  // From EXTERNAL_CORRELATION records: CUPTI correlation id -> the external id pushed by the op
  // that was innermost when the API call was made.
  std::unordered_map<std::uint32_t, std::uint64_t> external;
  std::uint64_t records = 0;      // records read
  std::uint64_t other_kinds = 0;  // records of kinds we do not use (ignored)
  std::uint64_t dropped = 0;      // records CUPTI could not store
  std::vector<std::string> notes;

  // Sets external_id on device and API events from `external`. Records arrive in several
  // buffers in no promised order, so this runs once, after the last buffer.
  void resolve();
};

// Reads one record: kernels (CONCURRENT_KERNEL and KERNEL), memcpy, memset, runtime and driver
// API calls, external correlation. Other kinds are counted and ignored.
void process_record(const CUpti_Activity* record, DeviceRecords& out);

// Walks a completed buffer with cuptiActivityGetNextRecord up to valid_size bytes. Returns the
// number of records read; throws util::EnvironmentError when CUPTI reports anything but the end
// of the buffer.
std::size_t process_buffer(std::uint8_t* buffer, std::size_t valid_size, DeviceRecords& out);

// "Memcpy HtoD", "Memcpy DtoD", ... for a CUpti_ActivityMemcpyKind value.
std::string memcpy_name(std::uint8_t copy_kind);

// Kernel names arrive mangled; the cost matrix shows them as users wrote them.
std::string demangle(const char* name);

}  // namespace attnprof::trace
