// attnprof's own attention kernels against LibTorch's, through the kernel registry.
//   CPU: cpu.flash and cpu.naive vs sdpa.flash (LibTorch's fused CPU kernel) and sdpa.math,
//        as time ratios, at 1 thread and at LibTorch's default intra-op thread count, the
//        variants timed in interleaved rounds.
//   GPU (when LibTorch sees one): cuda.flash, cuda.decode, cuda.naive vs sdpa.flash, in TFLOP/s
//        and as a fraction of the device's dense 16-bit tensor peak (ATTNPROF_PEAK_TFLOPS
//        overrides the built-in table).
// Every output is first compared with sdpa.math in fp32 on the same inputs; a mismatch is
// printed instead of a time. Run: ninja -C build bench_torch_kernels &&
// build/bench/bench_torch_kernels [LABEL...]   (only the shapes with these labels: smoke,
// bert-base, prefill, prefill-d128, decode-gqa, prefill-bf16, prefill-d64, prefill-gqa, decode)
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/cuda/CUDAContext.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "worker/kernel/registry.h"

using namespace attnprof;

namespace {

struct Shape {
  const char* label;
  int batch, heads, kv_heads, q_len, kv_len, head_dim;
  core::MaskKind mask;
  core::DType dtype;
};

at::ScalarType scalar(core::DType t) {
  return t == core::DType::fp32 ? at::kFloat : t == core::DType::fp16 ? at::kHalf : at::kBFloat16;
}

core::Case make_case(const Shape& s, const std::string& device) {
  core::Case c;
  c.model = {s.label, s.heads, s.kv_heads, s.head_dim, s.heads * s.head_dim,
             1 << 20, 0,       0,          "rmsnorm"};
  c.batch = s.batch, c.q_len = s.q_len, c.kv_len = s.kv_len;
  c.mask = s.mask, c.dtype = s.dtype;
  c.hardware.device = device;
  return c;
}

kernel::Inputs make_inputs(const core::Case& c) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(42);
  const at::Device dev(c.hardware.device);
  auto randn = [&](int64_t h, int64_t s) {
    return at::randn({c.batch, h, s, c.model.head_dim}, gen, at::kFloat).to(dev, scalar(c.dtype));
  };
  kernel::Inputs in;
  in.q = randn(c.model.heads, c.q_len);
  in.k = randn(c.model.kv_heads, c.kv_len);
  in.v = randn(c.model.kv_heads, c.kv_len);
  in.scale = 1.0 / std::sqrt(double(c.model.head_dim));
  return in;
}

void sync(const core::Case& c) {
  if (c.hardware.device != "cpu") at::cuda::getCurrentCUDAStream().synchronize();
}

// The calling thread's CPU time in seconds: what a single-threaded call costs, whatever else
// runs on the machine (wall time on a shared CI machine mostly measures the neighbours).
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Median seconds per call of each variant, timed in rounds (one call of each per round, in
// turn) so that load from other processes hits them alike: on a shared machine the ratios hold
// where the absolute times do not. At least 5 rounds, then until `budget_s` or 200 rounds.
// cpu_time: the calling thread's CPU time instead of wall time (only meaningful when the call
// runs on the calling thread alone, i.e. at one thread). use_min: the fastest round instead of
// the median, for wall times on a busy machine, where a call whose threads all got a core at
// once is the only one that measures the kernel.
std::vector<double> time_calls(const std::vector<const kernel::Variant*>& vs,
                               const kernel::Inputs& in, const core::Case& c, double budget_s,
                               bool cpu_time = false, bool use_min = false) {
  for (const auto* v : vs)
    for (int i = 0; i < 3; ++i) v->launch(in);
  sync(c);
  std::vector<std::vector<double>> t(vs.size());
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0;
       round < 5 ||
       (round < 200 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < budget_s);
       ++round)
    for (std::size_t i = 0; i < vs.size(); ++i) {
      const auto a = std::chrono::steady_clock::now();
      const double a_cpu = thread_cpu_s();
      vs[i]->launch(in);
      sync(c);
      t[i].push_back(
          cpu_time ? thread_cpu_s() - a_cpu
                   : std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }
  std::vector<double> out;
  for (auto& x : t) {
    std::nth_element(x.begin(), x.begin() + x.size() / 2, x.end());
    out.push_back(use_min ? *std::min_element(x.begin(), x.end()) : x[x.size() / 2]);
  }
  return out;
}

double time_call(const kernel::Variant& v, const kernel::Inputs& in, const core::Case& c,
                 double budget_s) {
  return time_calls({&v}, in, c, budget_s)[0];
}

// Max |out - sdpa.math in fp32|, or a negative value when the variant skips the case.
double check(const kernel::Variant& v, const kernel::Inputs& in, const core::Case& c,
             std::string& why) {
  if (auto u = v.unsupported(c)) {
    why = *u;
    return -1;
  }
  at::Tensor ref = at::scaled_dot_product_attention(
      in.q.to(at::kFloat), in.k.to(at::kFloat), in.v.to(at::kFloat), std::nullopt, 0.0,
      c.mask == core::MaskKind::causal && c.q_len == c.kv_len, in.scale,
      c.model.heads != c.model.kv_heads);
  return (v.launch(in).to(at::kFloat) - ref).abs().max().item<double>();
}

double tolerance(core::DType t) {
  return t == core::DType::fp32 ? 1e-4 : t == core::DType::fp16 ? 5e-3 : 3e-2;
}

std::string shape_text(const Shape& s) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s b%d h%d/%d s%dx%d d%d %s %s", s.label, s.batch, s.heads,
                s.kv_heads, s.q_len, s.kv_len, s.head_dim, core::to_string(s.mask),
                core::to_string(s.dtype));
  return buf;
}

// Only the shapes whose label is in `only` (all when empty).
bool wanted(const Shape& s, const std::vector<std::string>& only) {
  return only.empty() || std::find(only.begin(), only.end(), s.label) != only.end();
}

void cpu_section(const std::vector<std::string>& only) {
  const Shape shapes[] = {
      // The smoke suite's cpu-kernels workload (scenarios/smoke.yaml): BERT-base, b1 s128.
      {"smoke", 1, 12, 12, 128, 128, 64, core::MaskKind::none, core::DType::fp32},
      {"smoke", 1, 12, 12, 128, 128, 64, core::MaskKind::causal, core::DType::fp32},
      {"bert-base", 8, 12, 12, 128, 128, 64, core::MaskKind::none, core::DType::fp32},
      {"prefill", 1, 16, 16, 1024, 1024, 64, core::MaskKind::causal, core::DType::fp32},
      {"prefill-d128", 1, 8, 8, 2048, 2048, 128, core::MaskKind::causal, core::DType::fp32},
      {"decode-gqa", 4, 32, 8, 1, 4096, 128, core::MaskKind::causal, core::DType::fp32},
      {"prefill-bf16", 1, 16, 16, 512, 512, 64, core::MaskKind::causal, core::DType::bf16},
  };
  const int default_threads = at::get_num_threads();
  std::printf(
      "## CPU: time ratio to sdpa.flash (LibTorch's fused CPU SDPA); < 1 is faster\n"
      "(1 thread: median CPU time of the calling thread; more threads: fastest wall time)\n\n");
  std::printf(
      "| shape | threads | sdpa.flash ms | sdpa.math ms | cpu.flash ms | cpu.flash ratio | "
      "cpu.naive ratio |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  auto& reg = kernel::registry();
  for (const Shape& s : shapes)
    for (int threads : {1, default_threads}) {
      if (!wanted(s, only)) continue;
      at::set_num_threads(threads);
      core::Case c = make_case(s, "cpu");
      kernel::Inputs in = make_inputs(c);
      in.spec = &c;
      std::string row = "| " + shape_text(s) + " | " + std::to_string(threads) + " |";
      // Check each variant first, then time those that passed together.
      const char* names[] = {"sdpa.flash", "sdpa.math", "cpu.flash", "cpu.naive"};
      std::string cell[4];
      std::vector<const kernel::Variant*> timed;
      std::vector<int> timed_index;
      for (int i = 0; i < 4; ++i) {
        const kernel::Variant* v = reg.find(names[i]);
        std::string why;
        const double err = v ? check(*v, in, c, why) : -1;
        char buf[96];
        if (!v) {
          std::snprintf(buf, sizeof buf, " not built |");
        } else if (err < 0) {
          std::snprintf(buf, sizeof buf, " skip |");
        } else if (!(err <= tolerance(s.dtype))) {
          std::snprintf(buf, sizeof buf, " WRONG (max err %.2g) |", err);
        } else if (i == 3 && double(s.q_len) * s.kv_len * s.heads > 3e7) {
          std::snprintf(buf, sizeof buf, " (ok, not timed) |");
        } else {
          timed.push_back(v);
          timed_index.push_back(i);
          continue;
        }
        cell[i] = buf;
      }
      const std::vector<double> t = time_calls(timed, in, c, 2.0, threads == 1, threads > 1);
      double base = 0;
      for (std::size_t j = 0; j < timed.size(); ++j)
        if (timed_index[j] == 0) base = t[j];
      for (std::size_t j = 0; j < timed.size(); ++j) {
        char buf[96];
        const int i = timed_index[j];
        if (i == 2)
          std::snprintf(buf, sizeof buf, " %.3f | %.2f |", t[j] * 1e3, t[j] / base);
        else if (i == 3)
          std::snprintf(buf, sizeof buf, " %.2f |", t[j] / base);
        else
          std::snprintf(buf, sizeof buf, " %.3f |", t[j] * 1e3);
        cell[i] = buf;
      }
      for (const auto& x : cell) row += x;
      std::printf("%s\n", row.c_str());
      std::fflush(stdout);
    }
  at::set_num_threads(default_threads);
}

double peak_tflops(const std::string& device_name) {
  if (const char* env = std::getenv("ATTNPROF_PEAK_TFLOPS")) return std::atof(env);
  // Dense fp16/bf16 tensor-core peaks (vendor datasheets, SXM parts at boost clock).
  const std::pair<const char*, double> table[] = {
      {"H200", 989.4}, {"H100", 989.4}, {"A100", 312.0}, {"L40S", 362.1}, {"L4", 121.0}};
  for (const auto& [name, tf] : table)
    if (device_name.find(name) != std::string::npos) return tf;
  return 0;
}

void gpu_section(const std::vector<std::string>& only) {
  if (!at::hasCUDA() || at::cuda::device_count() == 0) {
    std::printf("\n## GPU: no CUDA device visible to LibTorch; skipped\n");
    return;
  }
  const std::string dev_name = at::cuda::getCurrentDeviceProperties()->name;
  const double peak = peak_tflops(dev_name);
  std::printf("\n## GPU: %s (dense 16-bit peak %.0f TFLOP/s)\n\n", dev_name.c_str(), peak);
  std::printf("| shape | variant | ms | TFLOP/s | of peak | GB/s |\n|---|---|---|---|---|---|\n");
  const Shape shapes[] = {
      {"prefill", 4, 32, 32, 2048, 2048, 128, core::MaskKind::causal, core::DType::bf16},
      {"prefill-d64", 8, 16, 16, 1024, 1024, 64, core::MaskKind::causal, core::DType::fp16},
      {"prefill-gqa", 2, 32, 8, 4096, 4096, 128, core::MaskKind::none, core::DType::bf16},
      {"decode-gqa", 16, 32, 8, 1, 8192, 128, core::MaskKind::causal, core::DType::bf16},
      {"decode", 1, 32, 32, 1, 32768, 128, core::MaskKind::causal, core::DType::fp16},
  };
  auto& reg = kernel::registry();
  for (const Shape& s : shapes) {
    if (!wanted(s, only)) continue;
    core::Case c = make_case(s, "cuda");
    kernel::Inputs in = make_inputs(c);
    in.spec = &c;
    for (const char* name :
         {"sdpa.flash", "cuda.flash", "cuda.decode", "cuda.varlen", "cuda.naive"}) {
      const kernel::Variant* v = reg.find(name);
      if (!v) continue;
      std::string why;
      const double err = check(*v, in, c, why);
      if (err < 0) continue;  // unsupported (e.g. cuda.decode on prefill)
      if (!(err <= tolerance(s.dtype))) {
        std::printf("| %s | %s | WRONG (max err %.3g) | | | |\n", shape_text(s).c_str(), name, err);
        continue;
      }
      const double t = time_call(*v, in, c, 0.5);
      const double tf = kernel::attention_flops(c) / t / 1e12;
      std::printf("| %s | %s | %.3f | %.1f | %.1f%% | %.0f |\n", shape_text(s).c_str(), name,
                  t * 1e3, tf, peak > 0 ? 100 * tf / peak : 0.0,
                  kernel::attention_bytes(c) / t / 1e9);
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> only(argv + 1, argv + argc);
  std::printf("# attnprof kernels vs LibTorch %s (intra-op threads: %d)\n\n", TORCH_VERSION,
              at::get_num_threads());
  cpu_section(only);
  gpu_section(only);
  return 0;
}
