// env::peak_tflops: the datasheet table the roofline divides by, matched on whole words of the
// name CUDA reports, so a form factor or a similar name never borrows another part's peak.
#include <doctest/doctest.h>

#include "harness/env/environment.h"

using namespace attnprof;

namespace {

double peak(const std::string& name, core::DType dtype = core::DType::bf16) {
  env::Device d;
  d.name = name;
  return env::peak_tflops(d, dtype);
}

}  // namespace

TEST_SUITE("env::peak_tflops") {
  TEST_CASE("H100 PCIe and NVL have their own peaks; the plain name is the SXM part") {
    CHECK(peak("NVIDIA H100 PCIe") == 756.5);
    CHECK(peak("NVIDIA H100 NVL") == 835.5);
    CHECK(peak("NVIDIA H100 80GB HBM3") == 989.4);
    CHECK(peak("NVIDIA H200") == 989.4);
    CHECK(peak("NVIDIA H200 NVL") == 835.5);
    CHECK(peak("NVIDIA H100 PCIe", core::DType::fp32) == 51.2);
  }

  TEST_CASE("L40 is not L4, and L40S is neither") {
    CHECK(peak("NVIDIA L4") == 121);
    CHECK(peak("NVIDIA L40") == 181.0);
    CHECK(peak("NVIDIA L40S") == 362.1);
    CHECK(peak("NVIDIA A100-SXM4-80GB") == 312);
  }

  TEST_CASE("an unknown GPU has no peak") {
    CHECK(peak("NVIDIA GeForce RTX 4090") == 0);
    CHECK(peak("NVIDIA L400") == 0);
  }
}

TEST_SUITE("env::render") {
  TEST_CASE("attnprof env says how a GPU's clocks are set, and the JSON carries it") {
    env::Description d;
    env::Device dev;
    dev.name = "NVIDIA H100 80GB HBM3";
    dev.app_clock_mhz = 1410;
    dev.default_app_clock_mhz = 1980;
    dev.persistence = "enabled";
    d.devices.push_back(dev);
    CHECK(env::render(d).find(
              "                clocks: applications 1410 MHz (set; the default is 1980), "
              "persistence enabled\n") != std::string::npos);
    const env::Description back = env::description_from_json(env::to_json(d));
    CHECK(back.devices.at(0).app_clock_mhz == 1410);
    CHECK(back.devices.at(0).persistence == "enabled");
    // Not in the fingerprint: the history across a change of clocks stays one environment.
    env::Description other = d;
    other.devices[0].app_clock_mhz = 1980;
    CHECK(env::fingerprint_for(d, "cuda").fingerprint() ==
          env::fingerprint_for(other, "cuda").fingerprint());
  }
}
