// The SM clock per sample (cuda_parts.h): NVML, loaded at run time, the device found by the
// CUDA device's PCI bus id (CUDA_VISIBLE_DEVICES renumbers CUDA devices; NVML orders by bus).
#include "worker/env/nvml.h"
#include "worker/runner/cuda_parts.h"

namespace attnprof::runner::cuda {
namespace {

class NvmlClockReader final : public measure::ClockReader {
 public:
  explicit NvmlClockReader(void* device) : m_device(device) {}
  std::optional<double> sm_clock_mhz() override {
    return env::Nvml::instance().sm_clock_mhz(m_device);
  }

 private:
  void* m_device;
};

}  // namespace

void* nvml_device(int device) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) return nullptr;
  return env::Nvml::instance().device(bus);
}

std::unique_ptr<measure::ClockReader> make_clock_reader(int device) {
  void* nvml = nvml_device(device);
  return nvml ? std::make_unique<NvmlClockReader>(nvml) : nullptr;
}

}  // namespace attnprof::runner::cuda
