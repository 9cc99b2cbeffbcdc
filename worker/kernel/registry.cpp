// The registry of kernel variants (registry.h), the families registered into it, and the FLOP
// and byte models of attention for the roofline.
#include "worker/kernel/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "harness/kernel/python.h"
#include "harness/kernel/score_mod.h"
#include "worker/kernel/variants/variants.h"

namespace attnprof::kernel {

void Registry::add(Variant v) {
  if (find(v.name)) throw std::logic_error("kernel variant registered twice: " + v.name);
  m_variants.push_back(std::move(v));
}

const Variant* Registry::find(std::string_view name) const {
  for (const auto& v : m_variants)
    if (v.name == name) return &v;
  return nullptr;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& v : m_variants) out.push_back(v.name);
  return out;
}

std::vector<at::Tensor> convention_args(const Inputs& in) {
  std::vector<at::Tensor> args{in.q, in.k, in.v};
  if (in.mask.defined()) args.push_back(in.mask);
  return args;
}

std::vector<at::Tensor> convention_args(const BlockInputs& in) {
  std::vector<at::Tensor> args{in.x, in.wqkv, in.wo, in.k_cache, in.v_cache};
  if (in.spec->level == core::Level::layer) {
    args.insert(args.end(), {in.norm1, in.norm2, in.w1, in.w2});
    if (in.w3.defined()) args.push_back(in.w3);
  }
  if (in.mask.defined()) args.push_back(in.mask);
  return args;
}

std::optional<std::string> unsupported(const Variant& v, const core::Case& c) {
  std::string why;
  const auto mod = parse_score_mod(c.score_mod, &why);
  if (!mod) return fmt::format("score_mod: {}", why);
  if (mod->kind != ScoreMod::Kind::none &&
      std::find(v.score_mods.begin(), v.score_mods.end(), mod->name()) == v.score_mods.end()) {
    // The built-in kernels that do, a family as one "sdpa.*".
    std::vector<std::string> can;
    for (const auto& other : registry().all()) {
      if (is_python(other.name) || std::find(other.score_mods.begin(), other.score_mods.end(),
                                             mod->name()) == other.score_mods.end())
        continue;
      const auto dot = other.name.find('.');
      const std::string family =
          dot == std::string::npos ? other.name : other.name.substr(0, dot) + ".*";
      if (std::find(can.begin(), can.end(), family) == can.end()) can.push_back(family);
    }
    return fmt::format("{} computes no score modifier {} (kernels that do: {}flex, hf:...)",
                       v.name, mod->name(), can.empty() ? "" : fmt::format("{}, ", fmt::join(can, ", ")));
  }
  return v.unsupported(c);
}

bool replaces_workload(const core::Case& c, const Variant& v) {
  return c.level != core::Level::kernel && v.launch_block != nullptr;
}

Registry& registry() {
  // The list of built-in variant families: adding a family is one line here.
  static Registry r = [] {
    Registry reg;
    register_sdpa(reg);
    register_eager(reg);
#ifdef ATTNPROF_HAVE_KERNELS_CPU
    register_cpu(reg);
#endif
#ifdef ATTNPROF_HAVE_KERNELS_CUDA
    register_cuda(reg);
#endif
    return reg;
  }();
  return r;
}

namespace {

// Keys each sequence of the batch holds: kv_len, or its own length where lengths vary.
double keys_in_batch(const core::Case& c) {
  if (c.seq_lens.empty()) return double(c.batch) * c.kv_len;
  double keys = 0;
  for (int b = 0; b < c.batch; ++b)
    keys += std::min(c.kv_len, c.seq_lens[static_cast<size_t>(b) % c.seq_lens.size()]);
  return keys;
}

}  // namespace

double attention_bytes(const core::Case& c) {
  const double e = core::bytes_per_element(c.dtype);
  const double q = double(c.batch) * c.model.heads * c.q_len * c.model.head_dim;
  // A kernel reads only the keys and values a sequence has (padding past its length is skipped).
  const double keys = keys_in_batch(c);
  const double kv = 2.0 * c.model.kv_heads * keys * c.model.head_dim;
  double bytes = e * (2 * q + kv);  // Q and O, K and V
  if (c.kernel == "cuda.naive") {
    // Its fp32 score matrix goes through memory four times: written by the scores kernel, read
    // and written in place by the softmax, read by PV (kernels/cuda/naive.cu).
    bytes += 4.0 * 4.0 * c.model.heads * c.q_len * keys;
  }
  return bytes;
}

}  // namespace attnprof::kernel
