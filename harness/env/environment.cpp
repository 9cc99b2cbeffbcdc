// The machine description as plain data (environment.h): its JSON, its rendering for
// `attnprof env`, and the stable fingerprint of a device that history is kept under.
#include "harness/env/environment.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace attnprof::env {

core::Environment fingerprint_for(const Description& d, const std::string& device,
                                  const std::string& clock_policy) {
  core::Environment e;
  e.fields["clock.policy"] = clock_policy;
  e.fields["torch.version"] = d.torch_version;
  e.fields["device.kind"] = device.rfind("cuda", 0) == 0 ? "cuda" : "cpu";
  if (device.rfind("cuda", 0) == 0) {
    int index = 0;
    if (auto colon = device.find(':'); colon != std::string::npos)
      index = std::stoi(device.substr(colon + 1));
    for (const auto& dev : d.devices) {
      if (dev.index != index) continue;
      e.fields["device.name"] = dev.name;
      e.fields["device.compute_capability"] = dev.compute_capability;
      // Cards of one name differ in what bounds a kernel: a cut-down SKU or a MIG slice has
      // fewer SMs, and a lower power limit lowers the clocks under load.
      e.fields["device.sm_count"] = std::to_string(dev.sm_count);
      e.fields["device.power_limit_w"] =
          dev.power_limit_w > 0 ? fmt::format("{:.0f}", dev.power_limit_w) : "unknown";
      e.fields["device.mig"] = dev.mig_mode.empty() ? "unknown" : dev.mig_mode;
    }
    e.fields["cuda.runtime"] = d.cuda_runtime;
    // Driver major only: minor driver updates do not change kernel performance identity.
    e.fields["cuda.driver"] = d.cuda_driver.substr(0, d.cuda_driver.find('.'));
  } else {
    e.fields["device.name"] = d.cpu_model;
    // On the CPU the thread count is part of what is measured. On a GPU it is not: runners of
    // one GPU fleet with different core counts must share their history.
    e.fields["cpu.threads"] = std::to_string(d.torch_threads);
  }
  e.fields["cpu.model"] = d.cpu_model;
  return e;
}

bool device_usable(const Description& d, const std::string& device, std::string* why_not) {
  if (device == "cpu") return true;
  if (device.rfind("cuda", 0) != 0) {
    if (why_not) *why_not = fmt::format("unknown device \"{}\" (use cpu, cuda or cuda:N)", device);
    return false;
  }
  if (d.devices.empty()) {
    if (why_not) *why_not = d.cuda_status;
    return false;
  }
  int index = 0;
  if (auto colon = device.find(':'); colon != std::string::npos)
    index = std::stoi(device.substr(colon + 1));
  if (index >= static_cast<int>(d.devices.size())) {
    if (why_not)
      *why_not =
          fmt::format("{} requested but only {} CUDA device(s) present", device, d.devices.size());
    return false;
  }
  return true;
}

double peak_tflops(const Device& d, core::DType dtype) {
  struct Peak {
    std::vector<std::string_view> words;  // whole words of the device name, all required
    double half, fp32;
  };
  // Form factors of one chip differ by a quarter (clocks and power): the PCIe and NVL parts come
  // before the plain name, which stands for the SXM part. Whole words, so "L4" is not "L40".
  static const std::vector<Peak> table = {
      {{"H100", "PCIe"}, 756.5, 51.2},
      {{"H100", "NVL"}, 835.5, 59.8},
      {{"H200", "NVL"}, 835.5, 59.8},
      {{"H100"}, 989.4, 66.9},
      {{"H200"}, 989.4, 66.9},
      {{"A100"}, 312, 19.5},
      {{"L40S"}, 362.1, 91.6},
      {{"L40"}, 181.0, 90.5},
      {{"L4"}, 121, 30.3},
      {{"A10G"}, 70, 31.2},
  };
  std::vector<std::string_view> words;
  const std::string_view name = d.name;
  for (std::size_t i = 0; i < name.size();) {
    const std::size_t end = std::min(name.find_first_of(" -", i), name.size());
    if (end > i) words.push_back(name.substr(i, end - i));
    i = end + 1;
  }
  auto has = [&](std::string_view w) {
    return std::find(words.begin(), words.end(), w) != words.end();
  };
  for (const auto& p : table)
    if (std::all_of(p.words.begin(), p.words.end(), has))
      return dtype == core::DType::fp32 ? p.fp32 : p.half;
  return 0;
}

std::string render(const Description& d) {
  std::string out;
  out += fmt::format("cpu:            {} ({} logical CPUs)\n", d.cpu_model, d.cpu_logical);
  out += fmt::format("intra-op threads: {}\n", d.torch_threads);
  out += fmt::format("libtorch:       {}\n", d.torch_version);
  if (d.cuda_built) {
    out += fmt::format("cuda runtime:   {}\n", d.cuda_runtime.empty() ? "unknown" : d.cuda_runtime);
    out += fmt::format("cuda driver:    {}\n", d.cuda_driver.empty() ? "none" : d.cuda_driver);
  }
  out += fmt::format("cuda status:    {}\n", d.cuda_status);
  if (!d.cuda_toolkit.empty()) out += fmt::format("built with:     CUDA toolkit {}\n", d.cuda_toolkit);
  for (const auto& dev : d.devices) {
    out += fmt::format(
        "cuda:{}:         {} (sm_{}), {:.1f} GiB, {} SMs, L2 {:.0f} MiB, peak {:.0f} GB/s\n",
        dev.index, dev.name, dev.compute_capability, dev.memory_gib, dev.sm_count, dev.l2_mib,
        dev.peak_gbps);
    out += fmt::format("                PCI {}, power limit {}, MIG {}\n",
                       dev.pci_bus_id.empty() ? "unknown" : dev.pci_bus_id,
                       dev.power_limit_w > 0 ? fmt::format("{:.0f} W", dev.power_limit_w)
                                             : std::string("unknown"),
                       dev.mig_mode.empty() ? "unknown" : dev.mig_mode);
    out += fmt::format("                clocks: applications {}, persistence {}\n",
                       dev.app_clock_mhz <= 0 ? std::string("unknown")
                       : dev.app_clock_mhz == dev.default_app_clock_mhz
                           ? fmt::format("{:.0f} MHz (the default)", dev.app_clock_mhz)
                           : fmt::format("{:.0f} MHz (set; the default is {:.0f})",
                                         dev.app_clock_mhz, dev.default_app_clock_mhz),
                       dev.persistence.empty() ? "unknown" : dev.persistence);
  }
  return out;
}

nlohmann::json to_json(const Description& d) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& dev : d.devices)
    devices.push_back({{"index", dev.index},
                       {"name", dev.name},
                       {"compute_capability", dev.compute_capability},
                       {"memory_gib", dev.memory_gib},
                       {"sm_count", dev.sm_count},
                       {"l2_mib", dev.l2_mib},
                       {"peak_gbps", dev.peak_gbps},
                       {"pci_bus_id", dev.pci_bus_id},
                       {"power_limit_w", dev.power_limit_w},
                       {"mig_mode", dev.mig_mode},
                       {"app_clock_mhz", dev.app_clock_mhz},
                       {"default_app_clock_mhz", dev.default_app_clock_mhz},
                       {"persistence", dev.persistence}});
  return {{"cpu_model", d.cpu_model},       {"cpu_logical", d.cpu_logical},
          {"torch_threads", d.torch_threads}, {"torch_version", d.torch_version},
          {"cuda_built", d.cuda_built},     {"cuda_runtime", d.cuda_runtime},
          {"cuda_driver", d.cuda_driver},   {"cuda_status", d.cuda_status},
          {"cuda_toolkit", d.cuda_toolkit}, {"torch_source", d.torch_source},
          {"devices", devices}};
}

Description description_from_json(const nlohmann::json& j) {
  Description d;
  d.cpu_model = j.at("cpu_model").get<std::string>();
  d.cpu_logical = j.at("cpu_logical").get<int>();
  d.torch_threads = j.at("torch_threads").get<int>();
  d.torch_version = j.at("torch_version").get<std::string>();
  d.cuda_built = j.at("cuda_built").get<bool>();
  d.cuda_runtime = j.at("cuda_runtime").get<std::string>();
  d.cuda_driver = j.at("cuda_driver").get<std::string>();
  d.cuda_status = j.at("cuda_status").get<std::string>();
  d.cuda_toolkit = j.value("cuda_toolkit", "");
  d.torch_source = j.value("torch_source", "");
  for (const auto& x : j.at("devices")) {
    Device dev;
    dev.index = x.at("index").get<int>();
    dev.name = x.at("name").get<std::string>();
    dev.compute_capability = x.at("compute_capability").get<std::string>();
    dev.memory_gib = x.at("memory_gib").get<double>();
    dev.sm_count = x.at("sm_count").get<int>();
    dev.l2_mib = x.at("l2_mib").get<double>();
    dev.peak_gbps = x.at("peak_gbps").get<double>();
    dev.pci_bus_id = x.value("pci_bus_id", "");
    dev.power_limit_w = x.value("power_limit_w", 0.0);
    dev.mig_mode = x.value("mig_mode", "");
    dev.app_clock_mhz = x.value("app_clock_mhz", 0.0);
    dev.default_app_clock_mhz = x.value("default_app_clock_mhz", 0.0);
    dev.persistence = x.value("persistence", "");
    d.devices.push_back(dev);
  }
  return d;
}

}  // namespace attnprof::env
