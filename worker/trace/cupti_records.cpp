// CUPTI activity records into DeviceEvent/ApiEvent (cupti_records.h).
//
// Records are read through the CUDA 13.0 header's current structs, choosing the struct by
// record->kind and reading only fields present in every version of that record's prefix
// (CUpti_ActivityKernel10 is Kernel9 plus trailing fields; CUDA 13.1 adds Kernel11 after them),
// so a newer libcupti handing us a longer record still reads correctly.
#include "worker/trace/cupti_records.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>

#include "harness/util/error.h"

namespace attnprof::trace {

std::string demangle(const char* name) {
  if (!name) return "<unknown kernel>";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

std::string memcpy_name(std::uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "Memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "Memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "Memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "Memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "Memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "Memcpy PtoP";
    default:
      return "Memcpy";
  }
}

void process_record(const CUpti_Activity* record, DeviceRecords& out) {
  ++out.records;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      DeviceEvent e;
      e.kind = DeviceKind::kernel;
      e.name = demangle(k->name);
      e.start_ns = k->start;
      e.end_ns = k->end;
      e.device = k->deviceId;
      e.stream = k->streamId;
      e.correlation_id = k->correlationId;
      e.grid = {k->gridX, k->gridY, k->gridZ};
      e.block = {k->blockX, k->blockY, k->blockZ};
      e.registers_per_thread = k->registersPerThread;
      e.static_shared_bytes = k->staticSharedMemory;
      e.dynamic_shared_bytes = k->dynamicSharedMemory;
      out.device.push_back(std::move(e));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      DeviceEvent e;
      e.kind = DeviceKind::memcpy;
      e.name = memcpy_name(m->copyKind);
      e.start_ns = m->start;
      e.end_ns = m->end;
      e.device = m->deviceId;
      e.stream = m->streamId;
      e.correlation_id = m->correlationId;
      e.bytes = m->bytes;
      out.device.push_back(std::move(e));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      DeviceEvent e;
      e.kind = DeviceKind::memset;
      e.name = "Memset";
      e.start_ns = m->start;
      e.end_ns = m->end;
      e.device = m->deviceId;
      e.stream = m->streamId;
      e.correlation_id = m->correlationId;
      e.bytes = m->bytes;
      out.device.push_back(std::move(e));
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      ApiEvent e;
      e.driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      e.cbid = a->cbid;
      e.start_ns = a->start;
      e.end_ns = a->end;
      e.thread = a->threadId;
      e.correlation_id = a->correlationId;
      out.api.push_back(e);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      // Our ops push CUSTOM0; other kinds belong to someone else's annotations.
      if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        out.external[x->correlationId] = x->externalId;
      break;
    }
    default:
      ++out.other_kinds;
      break;
  }
}

std::size_t process_buffer(std::uint8_t* buffer, std::size_t valid_size, DeviceRecords& out) {
  std::size_t n = 0;
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult rc = cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (rc == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the end of the valid bytes
    if (rc != CUPTI_SUCCESS) {
      const char* what = nullptr;
      cuptiGetResultString(rc, &what);
      throw util::EnvironmentError(
          fmt::format("cuptiActivityGetNextRecord after {} records: {} ({}:{})", n,
                      what ? what : "unknown CUPTI error", __FILE__, __LINE__));
    }
    process_record(record, out);
    ++n;
  }
  return n;
}

void DeviceRecords::resolve() {
  auto lookup = [this](std::uint32_t corr) -> std::uint64_t {
    const auto it = external.find(corr);
    return it == external.end() ? 0 : it->second;
  };
  for (auto& d : device) d.external_id = lookup(d.correlation_id);
  for (auto& a : api) a.external_id = lookup(a.correlation_id);
}

}  // namespace attnprof::trace
