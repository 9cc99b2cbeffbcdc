// What this machine is, asked of LibTorch and the CUDA runtime: CPU, threads, LibTorch, CUDA
// runtime and driver, devices (with NVML's power limit and MIG mode where the driver has NVML).
// Only attnprof-worker links this; attnprof receives the Description as JSON.
#pragma once

#include "harness/env/environment.h"

namespace attnprof::env {

// Without a driver or device it says why in cuda_status; it never throws for that.
Description describe();

}  // namespace attnprof::env
