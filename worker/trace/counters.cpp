// Range-profiler configuration and collection (counters.h). The flow is the one in
// NVIDIA's range_profiling sample (CUPTI's samples folder): initialize, chip name,
// counter availability, host config image, enable, counter data image, set config, passes of
// start / push range / body / pop range / stop, decode, evaluate.
#include "worker/trace/counters.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <fmt/format.h>

#include "harness/util/error.h"
#include "worker/trace/cupti_tracer.h"

namespace attnprof::trace {
namespace {

// A CUPTI params struct, zeroed, with its size set (the header's *_STRUCT_SIZE).
template <class P>
P params(std::size_t size) {
  P p{};
  p.structSize = size;
  return p;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

[[noreturn]] void fail(const char* call, CUptiResult rc, const std::string& context) {
  std::string msg = fmt::format("{}: {}", call, cupti_error_string(rc));
  if (!context.empty()) msg += " (" + context + ")";
  if (rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    msg +=
        ": hardware counters need profiling permission on this system; run as root or load "
        "the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0 "
        "(https://developer.nvidia.com/ERR_NVGPUCTRPERM), or run without hardware counters";
  throw util::EnvironmentError(msg);
}

#define ATTNPROF_CUPTI_CALL(call, params, context)       \
  do {                                                   \
    const CUptiResult rc_ = call(&(params));             \
    if (rc_ != CUPTI_SUCCESS) fail(#call, rc_, context); \
  } while (0)

// The host object, deinitialized on every path.
class HostObject {
 public:
  HostObject(const std::string& chip, const std::vector<std::uint8_t>& availability) {
    CUpti_Profiler_Host_Initialize_Params p = params<CUpti_Profiler_Host_Initialize_Params>(
        CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    ATTNPROF_CUPTI_CALL(cuptiProfilerHostInitialize, p, "chip " + chip);
    m_obj = p.pHostObject;
  }
  ~HostObject() {
    CUpti_Profiler_Host_Deinitialize_Params p = params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = m_obj;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  CUpti_Profiler_Host_Object* get() const { return m_obj; }

 private:
  CUpti_Profiler_Host_Object* m_obj = nullptr;
};

std::vector<const char*> c_names(const std::vector<std::string>& v) {
  std::vector<const char*> out;
  for (const auto& s : v) out.push_back(s.c_str());
  return out;
}

// Adds n metrics to the host object's configuration; CUPTI's result, for the caller to check.
CUptiResult add_metrics(const HostObject& host, const char** names, std::size_t n) {
  auto p = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  p.pHostObject = host.get();
  p.ppMetricNames = names;
  p.numMetrics = n;
  return cuptiProfilerHostConfigAddMetrics(&p);
}

void add_metrics_or_throw(const HostObject& host, const char** names, std::size_t n,
                          const std::string& context) {
  if (const CUptiResult rc = add_metrics(host, names, n); rc != CUPTI_SUCCESS)
    fail("cuptiProfilerHostConfigAddMetrics", rc, context);
}

}  // namespace

const std::vector<std::string>& default_counter_metrics() {
  static const std::vector<std::string> m = {"dram__bytes_read.sum", "dram__bytes_write.sum",
                                             "gpu__time_duration.sum"};
  return m;
}

std::vector<std::string> supported_counter_chips() {
  CUpti_Profiler_Host_GetSupportedChips_Params p =
      params<CUpti_Profiler_Host_GetSupportedChips_Params>(
          CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);
  ATTNPROF_CUPTI_CALL(cuptiProfilerHostGetSupportedChips, p, "");
  std::vector<std::string> chips;
  for (std::size_t i = 0; i < p.numChips; ++i) chips.emplace_back(p.ppChipNames[i]);
  return chips;
}

CounterConfig build_counter_config(const std::string& chip, const std::vector<std::string>& metrics,
                                   const std::vector<std::uint8_t>& counter_availability) {
  if (metrics.empty()) throw util::EnvironmentError("no hardware counter metrics requested");
  HostObject host(chip, counter_availability);
  // All metrics in one call: separate calls schedule separate passes (3 instead of 1 for the
  // defaults on GH100). When CUPTI rejects the set, find the culprit so the message names it.
  auto names = c_names(metrics);
  if (const CUptiResult rc = add_metrics(host, names.data(), names.size()); rc != CUPTI_SUCCESS) {
    for (const auto& m : metrics) {
      HostObject probe(chip, counter_availability);
      const char* name = m.c_str();
      add_metrics_or_throw(probe, &name, 1, fmt::format("metric \"{}\" on chip {}", m, chip));
    }
    fail("cuptiProfilerHostConfigAddMetrics", rc,
         fmt::format("metrics {} on chip {}", join(metrics), chip));
  }
  CounterConfig c;
  c.chip = chip;
  c.metrics = metrics;
  CUpti_Profiler_Host_GetConfigImageSize_Params sp =
      params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
          CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  sp.pHostObject = host.get();
  ATTNPROF_CUPTI_CALL(cuptiProfilerHostGetConfigImageSize, sp, "chip " + chip);
  c.image.resize(sp.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params ip = params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  ip.pHostObject = host.get();
  ip.configImageSize = c.image.size();
  ip.pConfigImage = c.image.data();
  ATTNPROF_CUPTI_CALL(cuptiProfilerHostGetConfigImage, ip, "chip " + chip);
  CUpti_Profiler_Host_GetNumOfPasses_Params np = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  np.configImageSize = c.image.size();
  np.pConfigImage = c.image.data();
  ATTNPROF_CUPTI_CALL(cuptiProfilerHostGetNumOfPasses, np, "chip " + chip);
  c.passes = np.numOfPasses;
  return c;
}

namespace {

// The driver context the runtime makes current on this thread. Through the runtime's
// entry-point query, so attnprof never links libcuda (absent on GPU-less CI machines).
CUcontext current_context() {
  if (const cudaError_t rc = cudaFree(nullptr); rc != cudaSuccess)
    throw util::EnvironmentError(fmt::format("cudaFree(0): {}", cudaGetErrorString(rc)));
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      !fn)
    throw util::EnvironmentError("cudaGetDriverEntryPointByVersion(cuCtxGetCurrent) failed");
  CUcontext ctx = nullptr;
  if (reinterpret_cast<CtxGetCurrent>(fn)(&ctx) != CUDA_SUCCESS || !ctx)
    throw util::EnvironmentError("cuCtxGetCurrent: no current CUDA context");
  return ctx;
}

// CUPTI's profiler, initialized for the caller's scope and deinitialized on every path.
class Profiler {
 public:
  Profiler() {
    CUpti_Profiler_Initialize_Params init =
        params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    ATTNPROF_CUPTI_CALL(cuptiProfilerInitialize, init, "");
  }
  ~Profiler() {
    CUpti_Profiler_DeInitialize_Params p = params<CUpti_Profiler_DeInitialize_Params>(
        CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    cuptiProfilerDeInitialize(&p);
  }
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;
};

std::string chip_name(int device) {
  CUpti_Device_GetChipName_Params cp =
      params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  cp.deviceIndex = static_cast<std::size_t>(device);
  ATTNPROF_CUPTI_CALL(cuptiDeviceGetChipName, cp, "");
  return cp.pChipName;
}

// Which counters the system lets this context read, as CUPTI's availability image.
std::vector<std::uint8_t> counter_availability(CUcontext ctx) {
  CUpti_Profiler_GetCounterAvailability_Params ap =
      params<CUpti_Profiler_GetCounterAvailability_Params>(
          CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  ap.ctx = ctx;
  ATTNPROF_CUPTI_CALL(cuptiProfilerGetCounterAvailability, ap, "size");
  std::vector<std::uint8_t> availability(ap.counterAvailabilityImageSize);
  ap.pCounterAvailabilityImage = availability.data();
  ATTNPROF_CUPTI_CALL(cuptiProfilerGetCounterAvailability, ap, "image");
  return availability;
}

// The range profiler enabled on a context, disabled on every path.
class RangeProfiler {
 public:
  RangeProfiler(CUcontext ctx, const std::string& chip) {
    CUpti_RangeProfiler_Enable_Params ep =
        params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    ep.ctx = ctx;
    ATTNPROF_CUPTI_CALL(cuptiRangeProfilerEnable, ep, "chip " + chip);
    m_obj = ep.pRangeProfilerObject;
  }
  ~RangeProfiler() {
    CUpti_RangeProfiler_Disable_Params p = params<CUpti_RangeProfiler_Disable_Params>(
        CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = m_obj;
    cuptiRangeProfilerDisable(&p);
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;
  CUpti_RangeProfiler_Object* get() const { return m_obj; }

 private:
  CUpti_RangeProfiler_Object* m_obj = nullptr;
};

// A counter data image for one range of the named metrics, initialized.
std::vector<std::uint8_t> counter_data_image(CUpti_RangeProfiler_Object* obj,
                                             std::vector<const char*>& names) {
  CUpti_RangeProfiler_GetCounterDataSize_Params dp =
      params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
          CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  dp.pRangeProfilerObject = obj;
  dp.pMetricNames = names.data();
  dp.numMetrics = names.size();
  dp.maxNumOfRanges = 1;
  dp.maxNumRangeTreeNodes = 1;
  ATTNPROF_CUPTI_CALL(cuptiRangeProfilerGetCounterDataSize, dp, "");
  std::vector<std::uint8_t> data(dp.counterDataSize);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params di =
      params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
          CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  di.pRangeProfilerObject = obj;
  di.counterDataSize = data.size();
  di.pCounterData = data.data();
  ATTNPROF_CUPTI_CALL(cuptiRangeProfilerCounterDataImageInitialize, di, "");
  return data;
}

// One user range at one nesting level, replayed by the user (the body reruns per pass).
void set_config(CUpti_RangeProfiler_Object* obj, CounterConfig& config,
                std::vector<std::uint8_t>& data) {
  CUpti_RangeProfiler_SetConfig_Params sc = params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  sc.pRangeProfilerObject = obj;
  sc.configSize = config.image.size();
  sc.pConfig = config.image.data();
  sc.counterDataImageSize = data.size();
  sc.pCounterDataImage = data.data();
  sc.range = CUPTI_UserRange;
  sc.replayMode = CUPTI_UserReplay;
  sc.maxRangesPerPass = 1;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  ATTNPROF_CUPTI_CALL(cuptiRangeProfilerSetConfig, sc, "");
}

// User replay: the body runs once per pass (1 for the default metrics on GH100), in a range
// named "body", until CUPTI has every pass.
void run_passes(CUpti_RangeProfiler_Object* obj, const std::function<void()>& body) {
  for (std::size_t pass = 0;; ++pass) {
    CUpti_RangeProfiler_Start_Params st =
        params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    st.pRangeProfilerObject = obj;
    ATTNPROF_CUPTI_CALL(cuptiRangeProfilerStart, st, fmt::format("pass {}", pass));
    CUpti_RangeProfiler_PushRange_Params pr = params<CUpti_RangeProfiler_PushRange_Params>(
        CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    pr.pRangeProfilerObject = obj;
    pr.pRangeName = "body";
    ATTNPROF_CUPTI_CALL(cuptiRangeProfilerPushRange, pr, "");
    body();
    cudaDeviceSynchronize();
    CUpti_RangeProfiler_PopRange_Params pp = params<CUpti_RangeProfiler_PopRange_Params>(
        CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pp.pRangeProfilerObject = obj;
    ATTNPROF_CUPTI_CALL(cuptiRangeProfilerPopRange, pp, "");
    CUpti_RangeProfiler_Stop_Params sp =
        params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    sp.pRangeProfilerObject = obj;
    ATTNPROF_CUPTI_CALL(cuptiRangeProfilerStop, sp, fmt::format("pass {}", pass));
    if (sp.isAllPassSubmitted) break;
    if (pass > 64) throw util::EnvironmentError("range profiler: more than 64 passes requested");
  }
}

// The collected data decoded, and each metric's value summed over the ranges, evaluated by the
// host object configured with the same metrics.
std::map<std::string, double> evaluate(CUpti_RangeProfiler_Object* obj, const HostObject& host,
                                       std::vector<std::uint8_t>& data,
                                       const std::vector<std::string>& metrics) {
  CUpti_RangeProfiler_DecodeData_Params dd = params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  dd.pRangeProfilerObject = obj;
  ATTNPROF_CUPTI_CALL(cuptiRangeProfilerDecodeData, dd, "");
  CUpti_RangeProfiler_GetCounterDataInfo_Params gi =
      params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
          CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  gi.pCounterDataImage = data.data();
  gi.counterDataImageSize = data.size();
  ATTNPROF_CUPTI_CALL(cuptiRangeProfilerGetCounterDataInfo, gi, "");

  auto names = c_names(metrics);
  std::map<std::string, double> out;
  std::vector<double> values(metrics.size());
  for (std::size_t r = 0; r < gi.numTotalRanges; ++r) {
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev =
        params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
            CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    ev.pHostObject = host.get();
    ev.pCounterDataImage = data.data();
    ev.counterDataImageSize = data.size();
    ev.rangeIndex = r;
    ev.ppMetricNames = names.data();
    ev.numMetrics = names.size();
    ev.pMetricValues = values.data();
    ATTNPROF_CUPTI_CALL(cuptiProfilerHostEvaluateToGpuValues, ev, join(metrics));
    for (std::size_t i = 0; i < metrics.size(); ++i) out[metrics[i]] += values[i];
  }
  return out;
}

}  // namespace

std::map<std::string, double> measure_counters(const std::function<void()>& body,
                                               const std::vector<std::string>& metrics) {
  std::string why;
  if (!device_tracing_available(&why)) throw util::EnvironmentError(why);
  // The range profiler works on a driver context.
  const CUcontext ctx = current_context();
  int device = 0;
  cudaGetDevice(&device);

  const Profiler profiler;
  const std::string chip = chip_name(device);
  const std::vector<std::uint8_t> availability = counter_availability(ctx);
  CounterConfig config = build_counter_config(chip, metrics, availability);
  auto names = c_names(metrics);
  HostObject host(chip, availability);  // for evaluation
  add_metrics_or_throw(host, names.data(), names.size(), "evaluation object");

  const RangeProfiler range(ctx, chip);
  std::vector<std::uint8_t> data = counter_data_image(range.get(), names);
  set_config(range.get(), config, data);
  run_passes(range.get(), body);
  return evaluate(range.get(), host, data, metrics);
}

}  // namespace attnprof::trace
