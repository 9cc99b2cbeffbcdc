// Compiled packages (package.h): where an aoti:PATH.pt2 file is, and which inputs a case
// calls it with.
#include "harness/kernel/package.h"

#include <cmath>
#include <filesystem>

namespace attnprof::kernel {

namespace fs = std::filesystem;

bool is_package(std::string_view kernel) {
  return kernel.starts_with(kPackagePrefix);
}

std::string package_path(std::string_view kernel, const std::string& scenario_file) {
  fs::path p(std::string(kernel.substr(kPackagePrefix.size())));
  if (p.is_relative() && !scenario_file.empty()) p = fs::path(scenario_file).parent_path() / p;
  std::error_code ec;
  return fs::absolute(p, ec).lexically_normal().string();
}

std::string package_path(const core::Case& c) {
  return package_path(c.kernel, c.loc.file);
}

bool takes_mask_tensor(const core::Case& c) {
  const bool padding = !c.seq_lens.empty();
  if (c.mask == core::MaskKind::custom || padding) return true;
  if (c.mask == core::MaskKind::none) return false;
  if (c.mask == core::MaskKind::causal) return c.q_len != c.kv_len && c.q_len != 1;
  return true;  // sliding_window, document, prefix
}

std::vector<std::string> package_inputs(const core::Case& c) {
  std::vector<std::string> in;
  if (c.level == core::Level::kernel) {
    in = {"q", "k", "v"};
  } else {
    in = {"x", "wqkv", "wo", "k_cache", "v_cache"};
    if (c.level == core::Level::layer) {
      in.insert(in.end(), {"norm1", "norm2", "w1", "w2"});
      if (c.model.norm == "rmsnorm") in.push_back("w3");
    }
  }
  if (takes_mask_tensor(c)) in.push_back("mask");
  return in;
}

bool causal_flag(const core::Case& c) {
  return c.mask == core::MaskKind::causal && !takes_mask_tensor(c) && c.q_len == c.kv_len;
}

double softmax_scale(const core::Case& c) {
  return c.scale ? *c.scale : 1.0 / std::sqrt(double(c.model.head_dim));
}

}  // namespace attnprof::kernel
