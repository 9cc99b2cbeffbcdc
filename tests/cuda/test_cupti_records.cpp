// trace::process_buffer on real CUPTI 13.0 record structs packed into a buffer and walked with
// cuptiActivityGetNextRecord: the path a GPU run's buffer-completion callback takes, no GPU needed
// (kineto's MockCuptiActivities idea).
#include <doctest/doctest.h>

#include <cstring>

#include "worker/trace/cupti_records.h"

using namespace attnprof;

namespace {

// An 8-byte-aligned activity buffer that records are appended to back to back.
class Buffer {
 public:
  template <class T>
  void put(const T& record) {
    const std::size_t at = (m_size + 7) & ~std::size_t{7};
    m_words.resize((at + sizeof(T) + 7) / 8);
    std::memcpy(bytes() + at, &record, sizeof(T));
    m_size = at + sizeof(T);
  }
  std::uint8_t* bytes() { return reinterpret_cast<std::uint8_t*>(m_words.data()); }
  std::size_t size() const { return m_size; }

 private:
  std::vector<std::uint64_t> m_words;
  std::size_t m_size = 0;
};

CUpti_ActivityKernel10 kernel(const char* name, std::uint32_t corr, std::uint64_t start,
                              std::uint64_t end) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.correlationId = corr;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.streamId = 7;
  k.gridX = 16;
  k.gridY = 8;
  k.gridZ = 1;
  k.blockX = 128;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 96;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 65536;
  return k;
}

CUpti_ActivityExternalCorrelation external(
    std::uint32_t corr, std::uint64_t id,
    CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
  CUpti_ActivityExternalCorrelation x;
  std::memset(&x, 0, sizeof x);
  x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  x.externalKind = kind;
  x.correlationId = corr;
  x.externalId = id;
  return x;
}

CUpti_ActivityAPI api(CUpti_ActivityKind kind, std::uint32_t corr, std::uint32_t cbid) {
  CUpti_ActivityAPI a;
  std::memset(&a, 0, sizeof a);
  a.kind = kind;
  a.correlationId = corr;
  a.cbid = cbid;
  a.start = 100;
  a.end = 110;
  a.threadId = 4242;
  return a;
}

}  // namespace

TEST_SUITE("trace::CuptiRecords") {
  TEST_CASE("record sizes are the ones the notes measured for CUPTI 13.0") {
    CHECK(sizeof(CUpti_ActivityKernel10) == 216);
    CHECK(sizeof(CUpti_ActivityExternalCorrelation) == 24);
    CHECK(sizeof(CUpti_ActivityMemcpy6) == 96);
  }

  TEST_CASE("kernels, memcpy, memset, API and external correlation come back mapped") {
    Buffer b;
    b.put(api(CUPTI_ACTIVITY_KIND_RUNTIME, 11, 211));
    b.put(external(11, 5));
    b.put(kernel("_Z10gemm_tiledILi64EEvPKfS1_Pfi", 11, 1000, 1500));
    CUpti_ActivityMemcpy6 m;
    std::memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.bytes = 4096;
    m.start = 2000;
    m.end = 2100;
    m.streamId = 7;
    m.correlationId = 12;
    b.put(m);
    CUpti_ActivityMemset4 s;
    std::memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.bytes = 256;
    s.start = 3000;
    s.end = 3010;
    s.correlationId = 13;
    b.put(s);
    b.put(api(CUPTI_ACTIVITY_KIND_DRIVER, 13, 5));
    b.put(external(13, 6));

    trace::DeviceRecords r;
    CHECK(trace::process_buffer(b.bytes(), b.size(), r) == 7);
    r.resolve();
    REQUIRE(r.device.size() == 3);
    const auto& k = r.device[0];
    CHECK(k.kind == trace::DeviceKind::kernel);
    CHECK(k.name == "void gemm_tiled<64>(float const*, float const*, float*, int)");
    CHECK(k.start_ns == 1000);
    CHECK(k.end_ns == 1500);
    CHECK(k.stream == 7);
    CHECK(k.grid == std::array<std::int32_t, 3>{16, 8, 1});
    CHECK(k.block == std::array<std::int32_t, 3>{128, 1, 1});
    CHECK(k.registers_per_thread == 96);
    CHECK(k.static_shared_bytes == 1024);
    CHECK(k.dynamic_shared_bytes == 65536);
    CHECK(k.external_id == 5);
    CHECK(r.device[1].name == "Memcpy DtoH");
    CHECK(r.device[1].bytes == 4096);
    CHECK(r.device[1].external_id == 0);  // no external record for correlation 12
    CHECK(r.device[2].kind == trace::DeviceKind::memset);
    CHECK(r.device[2].external_id == 6);
    REQUIRE(r.api.size() == 2);
    CHECK_FALSE(r.api[0].driver);
    CHECK(r.api[0].cbid == 211);
    CHECK(r.api[0].thread == 4242);
    CHECK(r.api[0].external_id == 5);
    CHECK(r.api[1].driver);
  }

  TEST_CASE("records split over several buffers resolve after the last one") {
    Buffer first, second;
    first.put(kernel("k", 21, 10, 20));  // kernel completes in an earlier buffer...
    second.put(external(21, 99));        // ...than its API call's external record
    trace::DeviceRecords r;
    trace::process_buffer(first.bytes(), first.size(), r);
    trace::process_buffer(second.bytes(), second.size(), r);
    r.resolve();
    REQUIRE(r.device.size() == 1);
    CHECK(r.device[0].external_id == 99);
  }

  TEST_CASE("other people's correlation kinds and unused record kinds are ignored") {
    Buffer b;
    b.put(external(31, 77, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1));
    CUpti_ActivityOverhead3 o;
    std::memset(&o, 0, sizeof o);
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    b.put(o);
    b.put(kernel("k", 31, 10, 20));
    trace::DeviceRecords r;
    CHECK(trace::process_buffer(b.bytes(), b.size(), r) == 3);
    r.resolve();
    CHECK(r.other_kinds == 1);
    CHECK(r.device[0].external_id == 0);
  }

  TEST_CASE("an empty buffer yields nothing") {
    Buffer b;
    b.put(std::uint64_t{0});
    trace::DeviceRecords r;
    CHECK(trace::process_buffer(b.bytes(), 0, r) == 0);
    CHECK(r.records == 0);
  }

  TEST_CASE("names: unmangled kernel names pass through; memcpy kinds") {
    CHECK(trace::demangle("flash_fwd_kernel") == "flash_fwd_kernel");
    CHECK(trace::demangle(nullptr) == "<unknown kernel>");
    CHECK(trace::memcpy_name(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) == "Memcpy HtoD");
    CHECK(trace::memcpy_name(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) == "Memcpy PtoP");
  }
}
