// kernels/cuda against kernels/cpu's naive reference on the same inputs, over shapes, masks,
// GQA ratios, dtypes, decode and packed (varlen) batches. Every test that needs a GPU returns
// early, with a message, where cudaGetDeviceCount() finds none; the support predicates need no
// GPU and always run.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/problem.h"
#include "kernels/cuda/attention.h"
#include "tests/device/device_test.h"

using namespace attnprof::kernels;
using cpu::make_problem;
using cpu::Problem;
using cpu::ProblemShape;

namespace {

using attnprof::device_test::have_gpu;

// A device copy of a host buffer, freed on scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const void* host, std::size_t bytes) {
    if (bytes == 0) return;
    CUDA_REQUIRE(cudaMalloc(&ptr, bytes));
    if (host) CUDA_REQUIRE(cudaMemcpy(ptr, host, bytes, cudaMemcpyHostToDevice));
  }
  template <typename V>
  explicit DeviceBuffer(const std::vector<V>& v) : DeviceBuffer(v.data(), v.size() * sizeof(V)) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(ptr); }
};

enum class Kernel { naive, flash, varlen, decode };
const char* name(Kernel k) {
  switch (k) {
    case Kernel::naive:
      return "cuda.naive";
    case Kernel::flash:
      return "cuda.flash";
    case Kernel::varlen:
      return "cuda.varlen";
    case Kernel::decode:
      return "cuda.decode";
  }
  return "?";
}

// Runs `kernel` on a device copy of the problem; returns the largest difference from
// cpu::naive_forward on the host copy. splits <= 0: decode_splits' choice.
double device_vs_reference(const ProblemShape& shape, Kernel kernel, int splits = 0) {
  Problem ref = make_problem(shape);
  REQUIRE(cpu::naive_forward(ref.params()).ok());

  Problem host = make_problem(shape);
  DeviceBuffer q(host.q), k(host.k), v(host.v), o(host.o), lens(host.seq_lens), mask(host.mask),
      cuq(host.cu_seqlens_q), cuk(host.cu_seqlens_k);
  CUDA_REQUIRE(
      cudaMemset(o.ptr, 0xff, host.o.size()));  // NaN-ish garbage: every row must be written
  AttentionParams p = host.params();
  p.q = q.ptr, p.k = k.ptr, p.v = v.ptr, p.o = o.ptr;
  p.seq_lens = static_cast<const int*>(lens.ptr);
  p.mask = static_cast<const float*>(mask.ptr);
  p.cu_seqlens_q = static_cast<const int*>(cuq.ptr);
  p.cu_seqlens_k = static_cast<const int*>(cuk.ptr);

  Status st;
  switch (kernel) {
    case Kernel::naive: {
      DeviceBuffer ws(nullptr, cuda::naive_workspace_bytes(p));
      st = cuda::naive_forward(p, ws.ptr, nullptr);
      if (st.ok()) CUDA_REQUIRE(cudaDeviceSynchronize());
      break;
    }
    case Kernel::flash:
      st = cuda::flash_forward(p, nullptr);
      break;
    case Kernel::varlen:
      st = cuda::varlen_forward(p, nullptr);
      break;
    case Kernel::decode: {
      int dev = 0, sms = 0;
      CUDA_REQUIRE(cudaGetDevice(&dev));
      CUDA_REQUIRE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
      if (splits <= 0) splits = cuda::decode_splits(p, sms);
      DeviceBuffer ws(nullptr, cuda::decode_workspace_bytes(p, splits));
      st = cuda::decode_forward(p, splits, ws.ptr, nullptr);
      if (st.ok()) CUDA_REQUIRE(cudaDeviceSynchronize());
      break;
    }
  }
  REQUIRE_MESSAGE(st.ok(), name(kernel) << ": " << st.message);
  CUDA_REQUIRE(cudaDeviceSynchronize());
  CUDA_REQUIRE(cudaMemcpy(host.o.data(), o.ptr, host.o.size(), cudaMemcpyDeviceToHost));
  return cpu::max_abs_diff(host.output(), ref.output());
}

// fp32 on the GPU: exp2f and a different summation order than the double reference; 1e-4 is
// still far below what a masking or indexing bug produces (>1e-2).
double device_tolerance(ScalarType t) {
  return std::max(cpu::tolerance(t), 1e-4);
}

struct Geometry {
  int batch, heads_q, heads_kv, seq_q, seq_k, head_dim;
};
const Geometry geometries[] = {
    {1, 1, 1, 1, 1, 64},    {2, 4, 4, 37, 37, 64}, {1, 8, 2, 100, 100, 128}, {2, 8, 1, 1, 257, 128},
    {1, 4, 4, 33, 129, 64}, {1, 2, 2, 70, 20, 64}, {1, 4, 1, 300, 300, 128}, {2, 2, 2, 65, 200, 64},
};

struct MaskCase {
  const char* name;
  bool causal;
  int window;
  bool padding, custom;
};
const MaskCase masks[] = {
    {"none", false, 0, false, false},         {"causal", true, 0, false, false},
    {"window", false, 16, false, false},      {"padding", false, 0, true, false},
    {"causal+padding", true, 0, true, false}, {"custom", false, 0, false, true}};
const ScalarType dtypes[] = {ScalarType::f32, ScalarType::f16, ScalarType::bf16};

ProblemShape shape_of(const Geometry& g, const MaskCase& m, ScalarType t) {
  ProblemShape s{g.batch, g.heads_q, g.heads_kv, g.seq_q,   g.seq_k, g.head_dim,
                 t,       m.causal,  m.window,   m.padding, m.custom};
  if (m.padding) s.batch = 3;  // sequences of different lengths
  return s;
}

}  // namespace

TEST_SUITE("kernels::cuda::attention") {
  TEST_CASE("support predicates give reasons without a GPU") {
    AttentionParams p;
    p.batch = 1, p.heads_q = 8, p.heads_kv = 2, p.seq_q = 16, p.seq_k = 64, p.head_dim = 96;
    p.set_contiguous_bhsd();
    CHECK(cuda::flash_supports(p).message == "cuda.flash: head_dim 96 not in {64, 128}");
    CHECK(cuda::decode_supports(p).message == "cuda.decode: head_dim 96 not in {64, 128}");
    CHECK(cuda::naive_supports(p).ok());
    p.head_dim = 128;
    p.set_contiguous_bhsd();
    CHECK(cuda::flash_supports(p).ok());
    CHECK(cuda::decode_supports(p).ok());
    p.seq_q = 17;
    p.set_contiguous_bhsd();
    CHECK(cuda::decode_supports(p).message ==
          "cuda.decode: seq_q 17 above 16 (a decode kernel; use cuda.flash for prefill)");
    p.heads_kv = 3;
    CHECK(cuda::flash_supports(p).message == "heads_q must be a multiple of heads_kv (GQA)");
    CHECK(cuda::varlen_forward(p, nullptr).message ==
          "cuda.varlen: cu_seqlens_q and cu_seqlens_k must be set");
    CHECK(cuda::decode_splits(p, 132) >= 1);
  }

  TEST_CASE("cuda.naive matches the reference over shapes, masks, GQA and dtypes") {
    if (!have_gpu()) return;
    for (const Geometry& g : geometries)
      for (const MaskCase& m : masks)
        for (ScalarType t : dtypes) {
          const ProblemShape s = shape_of(g, m, t);
          CAPTURE(s.name());
          CHECK(device_vs_reference(s, Kernel::naive) <= device_tolerance(t));
        }
    // head_dim that is not a multiple of the 16-wide tiles
    const ProblemShape odd{2, 4, 2, 23, 45, 40, ScalarType::f16, true};
    CAPTURE(odd.name());
    CHECK(device_vs_reference(odd, Kernel::naive) <= device_tolerance(odd.dtype));
  }

  TEST_CASE("cuda.flash matches the reference over shapes, masks, GQA and dtypes") {
    if (!have_gpu()) return;
    for (const Geometry& g : geometries)
      for (const MaskCase& m : masks)
        for (ScalarType t : dtypes) {
          const ProblemShape s = shape_of(g, m, t);
          CAPTURE(s.name());
          CHECK(device_vs_reference(s, Kernel::flash) <= device_tolerance(t));
        }
  }

  TEST_CASE("cuda.decode matches the reference: Sq 1 and 4, long caches, forced splits") {
    if (!have_gpu()) return;
    const Geometry decode_geometries[] = {{1, 8, 8, 1, 1, 128},
                                          {4, 32, 8, 1, 1000, 128},
                                          {3, 16, 2, 1, 4097, 64},
                                          {2, 8, 1, 4, 700, 128},
                                          {1, 4, 4, 1, 63, 64}};
    for (const Geometry& g : decode_geometries)
      for (const MaskCase& m : masks)
        for (ScalarType t : dtypes)
          for (int splits : {0, 1, 7}) {
            const ProblemShape s = shape_of(g, m, t);
            CAPTURE(s.name());
            CAPTURE(splits);
            CHECK(device_vs_reference(s, Kernel::decode, splits) <= device_tolerance(t));
          }
  }

  TEST_CASE("cuda.varlen, cuda.naive and cuda.decode on packed sequences") {
    if (!have_gpu()) return;
    for (bool causal : {false, true})
      for (int window : {0, 24})
        for (ScalarType t : dtypes)
          for (int head_dim : {64, 128}) {
            ProblemShape s{4, 8, 2, 150, 150, head_dim, t, causal, window};
            s.varlen = true;
            CAPTURE(s.name());
            CHECK(device_vs_reference(s, Kernel::varlen) <= device_tolerance(t));
            CHECK(device_vs_reference(s, Kernel::naive) <= device_tolerance(t));
            s.seq_q = 1;  // decode against caches of different lengths
            CAPTURE(s.name());
            CHECK(device_vs_reference(s, Kernel::varlen) <= device_tolerance(t));
            CHECK(device_vs_reference(s, Kernel::decode) <= device_tolerance(t));
          }
  }

  TEST_CASE("a wrong answer is caught: the comparison is not vacuous") {
    if (!have_gpu()) return;
    // The causal and the unmasked answers on the same inputs differ by far more than the
    // tolerance, so a kernel that dropped the mask could not pass the checks above.
    ProblemShape causal{1, 2, 2, 64, 64, 64, ScalarType::f32, true};
    ProblemShape plain = causal;
    plain.causal = false;
    Problem ref = make_problem(causal);
    REQUIRE(cpu::naive_forward(ref.params()).ok());
    Problem other = make_problem(plain);
    REQUIRE(cpu::naive_forward(other.params()).ok());
    CHECK(cpu::max_abs_diff(ref.output(), other.output()) > 1e-2);
    CHECK(device_vs_reference(plain, Kernel::flash) <= device_tolerance(plain.dtype));
  }
}
