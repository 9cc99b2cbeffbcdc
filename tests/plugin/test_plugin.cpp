// A user's attention kernel as a TORCH_LIBRARY op: plain matmul-softmax-matmul, with GQA and a
// bottom-right causal mask, in the calling convention of worker/kernel/plugin.h. Beside it, the
// kernels a harness must survive and measure: one that crashes its process, one that never
// returns, SDPA plus a known extra fraction of work (a planted slowdown for attnprof ab), and
// SDPA through another backend, with a planted error or a new allocation size every call.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal,
                     double scale) {
  const int64_t group = q.size(1) / k.size(1);
  at::Tensor kk = group > 1 ? k.repeat_interleave(group, 1) : k;
  at::Tensor vv = group > 1 ? v.repeat_interleave(group, 1) : v;
  at::Tensor s = at::matmul(q, kk.transpose(-2, -1)) * scale;
  if (is_causal) {
    const int64_t sq = q.size(2), sk = k.size(2);
    at::Tensor keep = at::ones({sq, sk}, q.options().dtype(at::kBool)).tril(sk - sq);
    s = s.masked_fill(keep.logical_not(), -INFINITY);
  }
  return at::matmul(at::softmax(s, -1), vv);
}

// Deliberately wrong (drops the scale): the harness must mark it failed, not time it.
at::Tensor attention_wrong(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           bool is_causal, double) {
  return attention(q, k, v, is_causal, 1.0);
}

// A kernel with a bug that kills its process (a wild pointer in a real one).
at::Tensor attention_crash(const at::Tensor& q, const at::Tensor&, const at::Tensor&, bool,
                           double) {
  std::raise(SIGSEGV);
  return q;
}

// A kernel that never returns (a deadlock, an infinite loop on the device).
at::Tensor attention_hang(const at::Tensor& q, const at::Tensor&, const at::Tensor&, bool, double) {
  while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
  return q;
}

// LibTorch's SDPA, then busy work for ATTNPROF_TEST_EXTRA (a fraction, default 0) of the time
// the SDPA call took: a slowdown of exactly that size however fast or noisy the machine is.
at::Tensor attention_slow(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          bool is_causal, double scale) {
  static const double extra = [] {
    const char* e = std::getenv("ATTNPROF_TEST_EXTRA");
    return e ? std::atof(e) : 0.0;
  }();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  at::Tensor out = at::scaled_dot_product_attention(q, k, v, {}, 0.0, is_causal, scale,
                                                    /*enable_gqa=*/k.size(1) != q.size(1));
  if (extra > 0) {
    const auto until = Clock::now() + (Clock::now() - t0) * extra;
    while (Clock::now() < until) {
    }
  }
  return out;
}

// What the environment variable `name` holds, read once per process: each side of an A/B is a
// process of its own (--head-arg=--env=NAME=VALUE).
std::string env_of(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// LibTorch's SDPA as a variant of a kernel under test would call it, chosen by environment
// variables so that one plugin is both sides of an A/B (or two runs of attnprof run):
//   ATTNPROF_TEST_BACKEND  "flash" or "math": that CPU backend's op, called directly (another
//                          kernel, the same result); unset: at::scaled_dot_product_attention
//   ATTNPROF_TEST_ERROR    a number added to every output element (0 too: the same ops with
//                          and without an error): a less accurate kernel
//   ATTNPROF_TEST_ALLOC    set: a buffer of another size every call, touched and freed. 96 to
//                          111 MiB: above the mmap threshold the worker sets (32 MiB) and above
//                          the free top of its heap (it pads the heap by 64 MiB and keeps freed
//                          memory), so glibc maps each one afresh and every call faults its pages
//                          in, the way a kernel with a workspace of a new size every call does
at::Tensor attention_variant(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             bool is_causal, double scale) {
  static const std::string backend = env_of("ATTNPROF_TEST_BACKEND");
  static const std::string error = env_of("ATTNPROF_TEST_ERROR");
  static const bool alloc = !env_of("ATTNPROF_TEST_ALLOC").empty();
  static std::int64_t calls = 0;
  if (alloc) {
    const std::int64_t mib = 96 + calls++ % 16;
    at::empty({mib << 20}, q.options().dtype(at::kByte)).fill_(1);
  }
  const int64_t group = q.size(1) / k.size(1);
  at::Tensor kk = group > 1 ? k.repeat_interleave(group, 1) : k;
  at::Tensor vv = group > 1 ? v.repeat_interleave(group, 1) : v;
  at::Tensor out = backend == "flash" ? std::get<0>(at::_scaled_dot_product_flash_attention_for_cpu(
                                            q, kk, vv, 0.0, is_causal, {}, scale))
                   : backend == "math"
                       ? std::get<0>(at::_scaled_dot_product_attention_math(q, kk, vv, {}, 0.0,
                                                                            is_causal, {}, scale))
                       : at::scaled_dot_product_attention(q, kk, vv, {}, 0.0, is_causal, scale);
  return error.empty() ? out : out + std::atof(error.c_str());
}

}  // namespace

TORCH_LIBRARY(attnprof_test, m) {
  m.def("attention(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor");
  m.def("attention_wrong(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor");
  m.def("bad_schema(Tensor q) -> Tensor");
  m.def("attention_crash(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor");
  m.def("attention_hang(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor");
  m.def("attention_slow(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor");
  m.def("attention_variant(Tensor q, Tensor k, Tensor v, bool is_causal, float scale) -> Tensor");
}

TORCH_LIBRARY_IMPL(attnprof_test, CompositeExplicitAutograd, m) {
  m.impl("attention", attention);
  m.impl("attention_wrong", attention_wrong);
  m.impl("bad_schema", [](const at::Tensor& q) { return q; });
  m.impl("attention_crash", attention_crash);
  m.impl("attention_hang", attention_hang);
  m.impl("attention_slow", attention_slow);
  m.impl("attention_variant", attention_variant);
}
