// The registry of kernel variants (registry.h), the families registered into it, and the FLOP
// and byte models of attention for the roofline.
#include "worker/kernel/registry.h"

#include <algorithm>
#include <stdexcept>

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

// Query-key pairs a kernel must score: every (query, key) that the case's causal, window and
// padding rules leave visible, with the positions kernels/attention_params.h defines (prefill:
// query i at i; decode: the queries end at each sequence's valid length). Custom masks count
// in full: their zeros are data, not structure.
double attention_pairs(const core::Case& c) {
  const bool causal = c.mask == core::MaskKind::causal;
  const bool window = c.mask == core::MaskKind::sliding_window && c.window > 0;
  double pairs = 0;
  for (int b = 0; b < c.batch; ++b) {
    const int len =
        c.seq_lens.empty()
            ? c.kv_len
            : std::min(c.kv_len, c.seq_lens[static_cast<size_t>(b) % c.seq_lens.size()]);
    if (!causal && !window) {
      pairs += double(c.q_len) * len;
      continue;
    }
    const int first = c.q_len == c.kv_len ? 0 : len - c.q_len;
    for (int i = 0; i < c.q_len; ++i) {
      const int pos = first + i;
      const int hi = std::min(len, pos + 1);
      const int lo = window ? std::max(0, pos - c.window + 1) : 0;
      pairs += std::max(0, hi - lo);
    }
  }
  return pairs;
}

double attention_flops(const core::Case& c) {
  // Two matrix products (QK^T and PV), 2 FLOPs per multiply-add, per visible pair and head.
  return 4.0 * c.model.heads * c.model.head_dim * attention_pairs(c);
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
