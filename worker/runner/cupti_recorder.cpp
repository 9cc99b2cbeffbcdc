// CUPTI in the GPU timer (cuda_parts.h): the CUPTI tracer of worker/trace, its device records
// grouped by the external id the timer pushed around each call.
#include "worker/runner/cuda_parts.h"
#include "worker/trace/cupti_tracer.h"

namespace attnprof::runner::cuda {
namespace {

class CuptiRecorder final : public measure::CallRecorder {
 public:
  CuptiRecorder() : m_tracer(trace::make_cupti_tracer()) {}
  void start() override { m_tracer->start(); }
  void push(std::uint64_t id) noexcept override { m_tracer->push_external_id(id); }
  void pop() noexcept override { m_tracer->pop_external_id(); }
  Records collect() override { return group(m_tracer->collect()); }
  void stop() override { m_tracer->stop(); }

 private:
  static Records group(trace::DeviceRecords rec) {
    Records out;
    for (const auto& d : rec.device)
      if (d.external_id != 0)
        out.calls[d.external_id].emplace_back(std::int64_t(d.start_ns), std::int64_t(d.end_ns));
    out.notes = std::move(rec.notes);
    return out;
  }
  std::unique_ptr<trace::DeviceTracer> m_tracer;
};

}  // namespace

std::unique_ptr<measure::CallRecorder> make_cupti_recorder(std::string* why_not) {
  if (!trace::device_tracing_available(why_not)) return nullptr;
  return std::make_unique<CuptiRecorder>();
}

}  // namespace attnprof::runner::cuda
