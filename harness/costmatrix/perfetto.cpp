// Chrome trace event format writer (perfetto.h). Event fields follow the format's spec and the
// categories Kineto uses ("cpu_op", "kernel", "gpu_memcpy", "gpu_memset", flow "ac2g"), so the
// result looks familiar next to a torch.profiler trace.
#include "harness/costmatrix/perfetto.h"

#include <nlohmann/json.hpp>
#include <set>

namespace attnprof::costmatrix {
namespace {

using nlohmann::json;

const char* category(trace::DeviceKind k) {
  switch (k) {
    case trace::DeviceKind::kernel:
      return "kernel";
    case trace::DeviceKind::memcpy:
      return "gpu_memcpy";
    case trace::DeviceKind::memset:
      return "gpu_memset";
  }
  return "kernel";
}

// Microseconds from the pass's earliest event, with nanosecond resolution.
struct TraceClock {
  std::uint64_t origin = 0;
  // Differences first, so that large epoch values keep their precision.
  double us(std::uint64_t ns) const {
    return static_cast<double>(static_cast<std::int64_t>(ns - origin)) / 1e3;
  }
  static double dur(std::uint64_t s, std::uint64_t e) {
    return e > s ? static_cast<double>(e - s) / 1e3 : 0.0;
  }
};

TraceClock trace_clock(const trace::Trace& t) {
  std::uint64_t origin = t.start_ns;
  for (const auto& op : t.ops) origin = origin ? std::min(origin, op.start_ns) : op.start_ns;
  for (const auto& d : t.device) origin = origin ? std::min(origin, d.start_ns) : d.start_ns;
  return TraceClock{origin};
}

// Metadata events naming the tracks: the CPU process and its threads, each GPU and its streams.
void track_events(const trace::Trace& t, json& events) {
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "CPU"}}}});
  std::set<std::uint32_t> threads;
  for (const auto& op : t.ops) threads.insert(op.thread);
  for (auto th : threads)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", th},
                      {"args", {{"name", "thread " + std::to_string(th)}}}});
  std::set<std::pair<std::uint32_t, std::uint32_t>> streams;
  for (const auto& d : t.device) streams.insert({d.device, d.stream});
  std::set<std::uint32_t> devices;
  for (const auto& [dev, stream] : streams) {
    if (devices.insert(dev).second)
      events.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", 1 + dev},
                        {"args", {{"name", "GPU " + std::to_string(dev)}}}});
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1 + dev},
                      {"tid", stream},
                      {"args", {{"name", "stream " + std::to_string(stream)}}}});
  }
}

void op_events(const trace::Trace& t, const TraceClock& clock, json& events) {
  for (const auto& op : t.ops) {
    json args = {{"Input Dims", op.input_shapes}, {"Input type", op.input_dtypes}};
    if (op.external_id) args["External id"] = op.external_id;
    if (op.bytes_allocated) args["Bytes allocated"] = op.bytes_allocated;
    if (op.bytes_freed) args["Bytes freed"] = op.bytes_freed;
    events.push_back({{"name", op.name},
                      {"cat", "cpu_op"},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", op.thread},
                      {"ts", clock.us(op.start_ns)},
                      {"dur", TraceClock::dur(op.start_ns, op.end_ns)},
                      {"args", args}});
  }
}

json device_args(const trace::Trace& t, const trace::DeviceEvent& d) {
  json args = {{"correlation", d.correlation_id}, {"device", d.device}, {"stream", d.stream}};
  if (d.op >= 0 && static_cast<std::size_t>(d.op) < t.ops.size()) args["op"] = t.ops[d.op].name;
  if (d.kind == trace::DeviceKind::kernel) {
    args["grid"] = d.grid;
    args["block"] = d.block;
    args["registers per thread"] = d.registers_per_thread;
    args["shared memory"] = d.static_shared_bytes + d.dynamic_shared_bytes;
  } else {
    args["bytes"] = d.bytes;
  }
  return args;
}

// Device slices on their streams, each with a flow arrow from the op that launched it.
void device_events(const trace::Trace& t, const TraceClock& clock, json& events) {
  std::uint64_t flow_id = 0;
  for (const auto& d : t.device) {
    const int pid = 1 + static_cast<int>(d.device);
    events.push_back({{"name", d.name},
                      {"cat", category(d.kind)},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", d.stream},
                      {"ts", clock.us(d.start_ns)},
                      {"dur", TraceClock::dur(d.start_ns, d.end_ns)},
                      {"args", device_args(t, d)}});
    if (d.op < 0 || static_cast<std::size_t>(d.op) >= t.ops.size()) continue;
    // The flow starts inside the op's slice and binds to the enclosing device slice.
    const auto& op = t.ops[d.op];
    ++flow_id;
    events.push_back({{"name", "launch"},
                      {"cat", "ac2g"},
                      {"ph", "s"},
                      {"id", flow_id},
                      {"pid", 0},
                      {"tid", op.thread},
                      {"ts", clock.us(op.start_ns)}});
    events.push_back({{"name", "launch"},
                      {"cat", "ac2g"},
                      {"ph", "f"},
                      {"bp", "e"},
                      {"id", flow_id},
                      {"pid", pid},
                      {"tid", d.stream},
                      {"ts", clock.us(d.start_ns)}});
  }
}

json other_data(const trace::Trace& t) {
  json other = {{"device_traced", t.device_traced}, {"dropped_records", t.dropped_records}};
  if (!t.notes.empty()) other["notes"] = t.notes;
  if (!t.counters.empty()) other["counters"] = t.counters;
  if (!t.peak_bytes.empty()) other["peak_bytes"] = t.peak_bytes;
  return other;
}

}  // namespace

std::string perfetto_json(const trace::Trace& t) {
  const TraceClock clock = trace_clock(t);
  json events = json::array();
  track_events(t, events);
  op_events(t, clock, events);
  device_events(t, clock, events);
  json doc = {{"displayTimeUnit", "ns"}, {"traceEvents", events}};
  doc["otherData"] = other_data(t);
  return doc.dump();
}

}  // namespace attnprof::costmatrix
