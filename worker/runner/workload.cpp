// A case's tensors and workloads (workload.h): seeded inputs and masks, and the block and layer
// around the kernel, with the fp32 references the checks compare against.
#include "worker/runner/workload.h"

#include <ATen/record_function.h>
#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "harness/kernel/package.h"
#include "harness/kernel/score_mod.h"
#include "harness/scenario/scenario.h"
#include "harness/util/error.h"

namespace attnprof::runner {

at::Device device_of(const core::Case& c) {
  return c.hardware.device == "cpu" ? at::Device(at::kCPU) : at::Device(c.hardware.device);
}

at::ScalarType scalar_type_of(core::DType d) {
  switch (d) {
    case core::DType::fp16:
      return at::kHalf;
    case core::DType::bf16:
      return at::kBFloat16;
    default:
      return at::kFloat;
  }
}

namespace {

// The seed of a case's data: inputs use it, weights and block inputs the next two, so every
// run of a case sees the same numbers.
std::uint64_t base_seed(const core::Case& c) {
  return c.seed ? c.seed : 0x5eed;
}

// A custom additive mask: Sq rows of Sk whitespace-separated floats ("-inf" allowed), added to
// the scores of every batch and head. Read as validate reads it (scenario/mask_file.cpp), with
// the same bounds: the file may have changed since the scenario was loaded.
at::Tensor load_additive_mask(const core::Case& c) {
  scenario::MaskFile m = scenario::read_mask_file(c.mask_file, c.q_len, c.kv_len);
  if (!m.beyond.empty() || m.rows != c.q_len || m.cols != c.kv_len)
    throw util::InputError(util::Diagnostic{
        c.mask_file, 0, 0,
        m.beyond.empty()
            ? fmt::format("{} rows of {} values; the case needs q_len x kv_len = {} x {}", m.rows,
                          m.cols, c.q_len, c.kv_len)
            : fmt::format("{}; the case needs q_len x kv_len = {} x {}", m.beyond, c.q_len,
                          c.kv_len)});
  return at::tensor(m.values).view({1, 1, c.q_len, c.kv_len});
}

}  // namespace

at::Tensor make_mask(const core::Case& c, const at::Tensor& seq_lens, at::Device device,
                     bool always) {
  const int64_t sq = c.q_len, sk = c.kv_len;
  if (c.mask == core::MaskKind::custom) {
    at::Tensor m = load_additive_mask(c);
    // Padding still applies: keys past a sequence's length get -inf.
    if (seq_lens.defined()) {
      at::Tensor kpos = at::arange(0, sk, at::kLong).view({1, 1, 1, sk});
      at::Tensor valid = kpos < seq_lens.to(at::kLong).view({c.batch, 1, 1, 1});
      m = m.expand({c.batch, 1, sq, sk}).masked_fill(valid.logical_not(), -INFINITY);
    }
    return m.to(device, scalar_type_of(c.dtype));
  }
  const bool causal = c.mask == core::MaskKind::causal;
  const bool window = c.mask == core::MaskKind::sliding_window && c.window > 0;
  const bool prefix = c.mask == core::MaskKind::prefix;
  const bool document = c.mask == core::MaskKind::document;
  // None without padding; causal prefill (is_causal says it) and a decode query (Sq = 1, sees
  // every key): no mask at all. The same rule tells a compiled package whether it takes one.
  if (!always && !kernel::takes_mask_tensor(c)) return {};
  // Positions as kernels/attention_params.h's key_range defines them: prefill (Sq == Sk)
  // query i at position i; decode, the queries are the last Sq tokens of each sequence's valid
  // length (all Sk keys without padding: bottom-right alignment).
  const Positions p = positions(c, seq_lens);
  at::Tensor keep = p.kpos < p.lens;  // [B, 1, Sk]: padding
  if (causal || window) keep = keep.logical_and(p.kpos <= p.qpos);
  if (window) keep = keep.logical_and(p.kpos > p.qpos - c.window);
  if (prefix) keep = keep.logical_and((p.kpos < c.prefix).logical_or(p.kpos <= p.qpos));
  if (document) {
    // Each position's document: the index of the packed document it falls in.
    at::Tensor doc = at::repeat_interleave(
        at::arange(0, static_cast<int64_t>(c.documents.size()), at::kLong),
        at::tensor(std::vector<int64_t>(c.documents.begin(), c.documents.end()), at::kLong));
    keep = keep.logical_and(doc.index({p.qpos}).eq(doc.view({1, 1, sk})));
  }
  return keep.expand({c.batch, sq, sk}).reshape({c.batch, 1, sq, sk}).to(device);
}

Positions positions(const core::Case& c, const at::Tensor& seq_lens) {
  const int64_t sq = c.q_len, sk = c.kv_len;
  Positions p;
  p.lens = seq_lens.defined() ? seq_lens.to(at::kLong).cpu().view({c.batch, 1, 1})
                              : at::full({c.batch, 1, 1}, sk, at::kLong);
  at::Tensor i = at::arange(0, sq, at::kLong).view({1, sq, 1});
  p.qpos = sq == sk ? i.expand({c.batch, sq, 1}) : p.lens - sq + i;  // [B, Sq, 1]
  p.kpos = at::arange(0, sk, at::kLong).view({1, 1, sk});
  return p;
}

at::Tensor score_bias(const core::Case& c, const at::Tensor& seq_lens) {
  const auto mod = kernel::parse_score_mod(c.score_mod);
  if (!mod || !mod->additive()) return {};
  const Positions p = positions(c, seq_lens);
  const int64_t h = c.model.heads;
  at::Tensor head = at::arange(0, h, at::kDouble).view({1, h, 1, 1});
  at::Tensor q = p.qpos.to(at::kDouble).unsqueeze(1), k = p.kpos.to(at::kDouble).unsqueeze(1);
  switch (mod->kind) {
    case kernel::ScoreMod::Kind::alibi:  // slope_h * (k - q), slope_h = 2^(-8 (h+1) / H)
      return at::exp2(-8.0 * (head + 1) / double(h)) * (k - q);
    case kernel::ScoreMod::Kind::rel_bias:
      return (q - k).expand({c.batch, h, c.q_len, c.kv_len});
    case kernel::ScoreMod::Kind::head_bias:
      return (2 * head).expand({c.batch, h, c.q_len, c.kv_len});
    default:
      return {};
  }
}

kernel::Inputs make_inputs(const core::Case& c) {
  const at::Device dev = device_of(c);
  const auto dtype = scalar_type_of(c.dtype);
  // Generate on the CPU with a seeded generator, then move: the same case gets the same data
  // on every device and every run.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(base_seed(c));
  auto randn = [&](std::vector<int64_t> shape) {
    return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)).to(dev, dtype);
  };
  kernel::Inputs in;
  in.spec = &c;
  in.q = randn({c.batch, c.model.heads, c.q_len, c.model.head_dim});
  in.k = randn({c.batch, c.model.kv_heads, c.kv_len, c.model.head_dim});
  in.v = randn({c.batch, c.model.kv_heads, c.kv_len, c.model.head_dim});
  if (!c.seq_lens.empty())
    in.seq_lens = at::tensor(std::vector<int>(c.seq_lens.begin(), c.seq_lens.end()), at::kInt);
  // An additive score modifier joins the mask: one additive float mask [B, H, Sq, Sk] that
  // eager and sdpa.* add to the scores, -inf where the mask (explicit then, causal too) hides a
  // key.
  at::Tensor bias = score_bias(c, in.seq_lens);
  in.mask = make_mask(c, in.seq_lens, dev, /*always=*/bias.defined());
  if (bias.defined()) {
    bias = bias.expand({c.batch, c.model.heads, c.q_len, c.kv_len}).to(at::kFloat);
    if (in.mask.scalar_type() == at::kBool)
      bias = bias.masked_fill(in.mask.cpu().logical_not(), -INFINITY);
    else
      bias = bias + in.mask.cpu().to(at::kFloat);
    in.mask = bias.contiguous().to(dev, dtype);
  }
  if (in.seq_lens.defined()) in.seq_lens = in.seq_lens.to(dev);
  in.scale = kernel::softmax_scale(c);
  return in;
}

namespace {

// Weights of one transformer layer at the case's geometry, seeded like the inputs and scaled
// so activations stay in range in fp16.
void add_weights(const core::Case& c, kernel::BlockInputs& lw) {
  const auto opts = at::TensorOptions().dtype(scalar_type_of(c.dtype)).device(device_of(c));
  auto gen = at::make_generator<at::CPUGeneratorImpl>(base_seed(c) + 1);
  auto w = [&](int64_t in, int64_t out) {
    return (at::randn({in, out}, gen) / std::sqrt(double(in))).to(opts);
  };
  const int64_t hidden = c.model.hidden > 0 ? c.model.hidden : c.model.heads * c.model.head_dim;
  const int64_t qkv = (c.model.heads + 2 * c.model.kv_heads) * int64_t(c.model.head_dim);
  lw.wqkv = w(hidden, qkv);
  lw.wo = w(int64_t(c.model.heads) * c.model.head_dim, hidden);
  if (c.level == core::Level::layer) {
    const int64_t mlp = c.model.mlp_hidden > 0 ? c.model.mlp_hidden : 4 * hidden;
    lw.w1 = w(hidden, mlp);
    lw.w2 = w(mlp, hidden);
    if (c.model.norm == "rmsnorm") lw.w3 = w(hidden, mlp);  // gated (SwiGLU) MLP
    lw.norm1 = at::ones({hidden}, opts);
    lw.norm2 = at::ones({hidden}, opts);
  }
}

at::Tensor norm(const core::Case& c, const at::Tensor& x, const at::Tensor& weight) {
  if (c.model.norm == "rmsnorm") {
    at::Tensor xf = x.to(at::kFloat);
    return (xf * at::rsqrt(xf.pow(2).mean(-1, true) + 1e-6)).to(x.scalar_type()) * weight;
  }
  return at::layer_norm(x, {x.size(-1)}, weight);
}

// One block or layer (per the case's level) around `attend`, which gets the kernel's inputs:
// the QKV projection, the new keys and values written into the cache (in place), attention,
// the output projection; a layer adds the norms, residuals and the MLP.
at::Tensor block_forward(const kernel::BlockInputs& bi, const kernel::Inputs& in,
                         const std::function<at::Tensor(const kernel::Inputs&)>& attend) {
  const core::Case& cs = *bi.spec;
  const int64_t b = cs.batch, sq = cs.q_len, hq = cs.model.heads, hkv = cs.model.kv_heads,
                d = cs.model.head_dim;
  const bool layer = cs.level == core::Level::layer;
  at::Tensor h = layer ? norm(cs, bi.x, bi.norm1) : bi.x;
  at::Tensor qkv = at::matmul(h, bi.wqkv);
  auto parts = qkv.split({hq * d, hkv * d, hkv * d}, -1);
  kernel::Inputs step = in;
  step.q = parts[0].view({b, sq, hq, d}).transpose(1, 2).contiguous();
  step.k = bi.k_cache;
  step.v = bi.v_cache;
  // New keys and values go where the queries sit (kernels/attention_params.h): prefill, the
  // whole cache; decode, the sq slots before each sequence's valid length (the cache's end
  // without padding).
  const int64_t sk = step.k.size(2);
  at::Tensor k_new = parts[1].view({b, sq, hkv, d}).transpose(1, 2);
  at::Tensor v_new = parts[2].view({b, sq, hkv, d}).transpose(1, 2);
  if (sq == sk || cs.seq_lens.empty()) {
    step.k.narrow(2, sk - sq, sq).copy_(k_new);
    step.v.narrow(2, sk - sq, sq).copy_(v_new);
  } else {
    for (int64_t s = 0; s < b; ++s) {
      const int64_t at_pos = std::max<int64_t>(0, cs.seq_lens[s] - sq);
      const int64_t n = std::min<int64_t>(sq, sk - at_pos);
      step.k[s].narrow(1, at_pos, n).copy_(k_new[s].narrow(1, 0, n));
      step.v[s].narrow(1, at_pos, n).copy_(v_new[s].narrow(1, 0, n));
    }
  }
  at::Tensor attn = attend(step);
  at::Tensor o = attn.transpose(1, 2).reshape({b, sq, hq * d});
  at::Tensor out = at::matmul(o, bi.wo);
  if (!layer) return out;
  at::Tensor r = bi.x + out;
  at::Tensor m = norm(cs, r, bi.norm2);
  at::Tensor up = at::matmul(m, bi.w1);
  at::Tensor act = bi.w3.defined() ? at::silu(up) * at::matmul(m, bi.w3) : at::gelu(up);
  return r + at::matmul(act, bi.w2);
}

}  // namespace

std::string attention_scope(std::string_view variant) {
  return "attnprof::" + std::string(variant);
}

kernel::BlockInputs make_block_inputs(const core::Case& c, const kernel::Inputs& in) {
  kernel::BlockInputs bi;
  bi.spec = &c;
  add_weights(c, bi);
  const int64_t hidden = bi.wqkv.size(0);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(base_seed(c) + 2);
  bi.x = at::randn({c.batch, c.q_len, hidden}, gen).to(in.q.options());
  bi.k_cache = in.k;
  bi.v_cache = in.v;
  bi.mask = in.mask;
  return bi;
}

at::Tensor reference_workload(const core::Case& c, const kernel::Inputs& in) {
  return reference_workload(c, in, *kernel::registry().find("sdpa.math"), true);
}

at::Tensor reference_workload(const core::Case& c, const kernel::Inputs& in,
                              const kernel::Variant& ref, bool fp32) {
  // Copies (so the reference's cache write leaves the case's cache alone) of the very numbers
  // the case's workload gets, in fp32 when asked.
  kernel::BlockInputs bi = make_block_inputs(c, in);
  auto copy = [fp32](at::Tensor& t) {
    if (t.defined()) t = fp32 ? t.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true) : t.clone();
  };
  for (at::Tensor* t : {&bi.x, &bi.wqkv, &bi.wo, &bi.k_cache, &bi.v_cache, &bi.norm1, &bi.norm2,
                        &bi.w1, &bi.w2, &bi.w3})
    copy(*t);
  if (bi.mask.defined() && bi.mask.scalar_type() != at::kBool) copy(bi.mask);
  if (kernel::replaces_workload(c, ref)) return ref.launch_block(bi);
  kernel::Inputs r = in;
  r.mask = bi.mask;
  return block_forward(bi, r, [&ref](const kernel::Inputs& step) { return ref.launch(step); });
}

std::function<at::Tensor()> make_workload(const core::Case& c, const kernel::Variant& v,
                                          const kernel::Inputs& in) {
  // Each call of the kernel runs inside a user scope named after the variant, so the cost
  // matrix shows kernels that are no ATen op (cpu.flash, cuda.*) and, for block and layer
  // cases, the attention share.
  const std::string scope = attention_scope(v.name);
  if (c.level == core::Level::kernel)
    return [&v, in, scope] {
      RECORD_USER_SCOPE(scope);
      return v.launch(in);
    };
  auto bi = std::make_shared<kernel::BlockInputs>(make_block_inputs(c, in));
  if (kernel::replaces_workload(c, v))  // a compiled block or layer: one call, one scope
    return [&v, bi, scope] {
      RECORD_USER_SCOPE(scope);
      return v.launch_block(*bi);
    };
  return [&v, in, bi, scope] {
    return block_forward(*bi, in, [&v, &scope](const kernel::Inputs& step) {
      RECORD_USER_SCOPE(scope);
      return v.launch(step);
    });
  };
}

}  // namespace attnprof::runner
