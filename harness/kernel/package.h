// Compiled packages as kernels, torch-free: a scenario names an AOTInductor package (made by
// ci/aoti-package.sh from torch.export) as "aoti:PATH.pt2". What attnprof, which links no
// LibTorch, needs of them: where the file is, and how a case calls one (which inputs, whether
// causal masking is the is_causal flag, the scale). The worker's side, which loads and runs the
// package, is worker/kernel/variants/aoti.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"

namespace attnprof::kernel {

inline constexpr std::string_view kPackagePrefix = "aoti:";

bool is_package(std::string_view kernel);

// The package file of an "aoti:PATH" kernel: PATH as given when absolute, else relative to the
// folder of the scenario file that names it (as mask_file is), made absolute.
std::string package_path(std::string_view kernel, const std::string& scenario_file);
std::string package_path(const core::Case& c);

// Whether the harness passes a mask tensor to a case's kernel (runner::make_mask makes one): for
// padding, sliding windows and custom masks, and for causal attention unless Sq == Sk (then
// is_causal says it) or Sq == 1 (a decode query sees every key).
bool takes_mask_tensor(const core::Case& c);
// The inputs a case calls a package with, by name, in order (docs/scenarios.md, "Compiled
// packages"): q, k, v at the kernel level; x, wqkv, wo, k_cache, v_cache for a block; a layer's
// norm1, norm2, w1, w2 (and w3 for a gated MLP) after them; then mask where takes_mask_tensor.
std::vector<std::string> package_inputs(const core::Case& c);
// Whether causal masking is SDPA's is_causal flag (top-left aligned, so only for Sq == Sk).
bool causal_flag(const core::Case& c);
// The softmax scale: the scenario's, else 1/sqrt(head_dim). Every kernel gets this one
// (runner::make_inputs, the adapters of our own kernels, a package's metadata check).
double softmax_scale(const core::Case& c);

}  // namespace attnprof::kernel
