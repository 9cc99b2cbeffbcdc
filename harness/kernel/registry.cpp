#include "harness/kernel/registry.h"

#include <stdexcept>

#include "harness/kernel/variants/variants.h"

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

double attention_flops(const core::Case& c) {
  double f = 4.0 * c.batch * c.model.heads * double(c.q_len) * c.kv_len * c.model.head_dim;
  // A causal prefill computes about half the score matrix.
  if (c.mask == core::MaskKind::causal && c.q_len == c.kv_len) f *= 0.5;
  return f;
}

double attention_bytes(const core::Case& c) {
  const double e = core::bytes_per_element(c.dtype);
  const double q = double(c.batch) * c.model.heads * c.q_len * c.model.head_dim;
  const double kv = 2.0 * c.batch * c.model.kv_heads * c.kv_len * c.model.head_dim;
  return e * (2 * q + kv);  // Q and O, K and V
}

}  // namespace attnprof::kernel
