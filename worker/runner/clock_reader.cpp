// The SM clock per sample (cuda_parts.h): nvbench's timestamps kernel around the call
// (kernels/cuda/blocking.h: the average clock over the sample), else NVML's clock of the moment
// after it, loaded at run time, the device found by the CUDA device's PCI bus id
// (CUDA_VISIBLE_DEVICES renumbers CUDA devices; NVML orders by bus).
#include "kernels/cuda/blocking.h"
#include "worker/env/nvml.h"
#include "worker/runner/cuda_parts.h"

namespace attnprof::runner::cuda {
namespace {

class NvmlClockReader final : public measure::ClockReader {
 public:
  explicit NvmlClockReader(void* device) : m_device(device) {}
  std::optional<double> sm_clock_mhz() override {
    return m_device ? env::Nvml::instance().sm_clock_mhz(m_device) : std::nullopt;
  }

 private:
  void* m_device;
};

// The timestamps kernel before the call and after it; a sample it gave no reading for (no block
// landed on SM 0, a launch that failed) reads NVML instead, and the share of each is kept.
class StampedClockReader final : public measure::ClockReader {
 public:
  StampedClockReader(std::unique_ptr<kernels::cuda::SmTimestamps> stamps, StreamSource stream,
                     void* nvml)
      : m_stamps(std::move(stamps)), m_stream(std::move(stream)), m_nvml(nvml) {}

  void before_call() override {
    m_stopped = false;
    m_started = m_stamps->stamp(m_stream(), true).ok();
  }
  void after_call() override { m_stopped = m_started && m_stamps->stamp(m_stream(), false).ok(); }

  std::optional<double> sm_clock_mhz() override {
    const bool bracketed = m_started && m_stopped;
    m_started = m_stopped = false;
    if (bracketed && cudaStreamSynchronize(m_stream()) == cudaSuccess) {
      // A reading past any clock the GPU can run at is two SMs' counters mixed (%smid may change
      // under preemption): NVML's instead.
      if (const double mhz = m_stamps->mhz(); mhz > 0 && mhz < kMaxPlausibleMhz) {
        ++m_stamped;
        return mhz;
      }
    }
    auto nvml = m_nvml.sm_clock_mhz();
    if (nvml) ++m_other;
    return nvml;
  }

  std::optional<double> timestamped_share() const override {
    if (m_stamped + m_other == 0) return std::nullopt;
    return double(m_stamped) / double(m_stamped + m_other);
  }

 private:
  std::unique_ptr<kernels::cuda::SmTimestamps> m_stamps;
  StreamSource m_stream;
  NvmlClockReader m_nvml;
  static constexpr double kMaxPlausibleMhz = 5000;
  bool m_started = false, m_stopped = false;
  long m_stamped = 0, m_other = 0;
};

}  // namespace

void* nvml_device(int device) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) return nullptr;
  return env::Nvml::instance().device(bus);
}

std::unique_ptr<measure::ClockReader> make_clock_reader(int device, StreamSource stream) {
  void* nvml = nvml_device(device);
  int sms = 0;
  auto stamps = std::make_unique<kernels::cuda::SmTimestamps>();
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
      stamps->init(sms).ok())
    return std::make_unique<StampedClockReader>(std::move(stamps), std::move(stream), nvml);
  return nvml ? std::make_unique<NvmlClockReader>(nvml) : nullptr;
}

}  // namespace attnprof::runner::cuda
