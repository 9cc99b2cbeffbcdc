// What a py: kernel's bridge costs per call (worker/kernel/variants/python.cpp): a module whose
// forward is one small op (q.add(1.0)) called three ways in one process, one intra-op thread,
// in alternating rounds so that a busy machine falls on all three alike:
//   bridge   through the py: variant's launch, as attnprof's timers call it (C++ into the
//            embedded interpreter: the GIL, three tensors wrapped, the call, the output checked)
//   python   the same module called from a Python loop, timed by torch.utils.benchmark in the
//            same interpreter (what a user measuring it in Python sees)
//   c++      the op itself, at::add, from C++ (no Python at all)
// Prints each round's per-call time and the medians, and bridge - python (the issue's bound:
// within 1 us). Run: ninja -C build bench_torch_python_bridge &&
// build/bench/bench_torch_python_bridge [rounds] [calls]
#ifdef ATTNPROF_HAVE_PYTHON
#include <Python.h>
#endif

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "worker/kernel/plugin.h"
#include "worker/kernel/registry.h"

using namespace attnprof;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

template <class F>
double per_call_us(int calls, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
         calls;
}

}  // namespace

int main(int argc, char** argv) {
#ifndef ATTNPROF_HAVE_PYTHON
  (void)argc;
  (void)argv;
  fmt::print("bench_torch_python_bridge: this build has no Python (py: kernels are off)\n");
  return 0;
#else
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 20000;
  at::set_num_threads(1);
  const std::string file = fmt::format("/tmp/attnprof-bridge-{}.py", getpid());
  std::ofstream(file) << "import torch\n\n\nclass AddOne(torch.nn.Module):\n"
                         "    def forward(self, q, k, v):\n        return q.add(1.0)\n";
  core::Case c;
  c.kernel = "py:" + file + ":AddOne";
  c.model.heads = c.model.kv_heads = 1;
  c.model.head_dim = 8;
  c.batch = 1;
  c.q_len = c.kv_len = 8;
  std::string why;
  const kernel::Variant* v = kernel::lookup(c.kernel, &why);
  if (!v) {
    fmt::print(stderr, "{}\n", why);
    return 1;
  }
  c10::InferenceMode no_autograd;
  v->prepare(c);
  kernel::Inputs in;
  in.q = at::randn({1, 1, 8, 8});
  in.k = in.q.clone();
  in.v = in.q.clone();
  in.spec = &c;

  // The Python loop's side: the same module, called by torch.utils.benchmark in the worker's
  // interpreter (started by prepare above), its result left in __main__.per_call_us.
  const std::string timer = fmt::format(R"PY(
import importlib.util, torch, torch.utils.benchmark as tb
spec = importlib.util.spec_from_file_location("bridge_bench", "{}")
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
m = mod.AddOne().eval()
q = torch.randn(1, 1, 8, 8); k = q.clone(); v = q.clone()
def run():
    with torch.inference_mode():
        return tb.Timer("m(q, k, v)", globals={{"m": m, "q": q, "k": k, "v": v}},
                        num_threads=1).timeit({}).median * 1e6
)PY",
                                        file, calls);
  {
    PyGILState_STATE g = PyGILState_Ensure();
    PyRun_SimpleString(timer.c_str());
    PyGILState_Release(g);
  }
  auto python_loop = [] {
    PyGILState_STATE g = PyGILState_Ensure();
    PyRun_SimpleString("per_call_us = run()");
    PyObject* main = PyImport_AddModule("__main__");
    PyObject* us = PyObject_GetAttrString(main, "per_call_us");
    const double out = us ? PyFloat_AsDouble(us) : -1;
    Py_XDECREF(us);
    PyGILState_Release(g);
    return out;
  };

  for (int i = 0; i < 2000; ++i) v->launch(in);  // warm both paths
  std::vector<double> bridge, python, cpp;
  fmt::print("{} rounds of {} calls, one thread; us per call\n", rounds, calls);
  fmt::print("{:>5}  {:>8}  {:>8}  {:>8}\n", "round", "bridge", "python", "c++");
  for (int r = 0; r < rounds; ++r) {
    // Alternating order: each path goes first in some rounds.
    double b = 0, p = 0, x = 0;
    auto do_bridge = [&] { b = per_call_us(calls, [&] { v->launch(in); }); };
    auto do_python = [&] { p = python_loop(); };
    auto do_cpp = [&] { x = per_call_us(calls, [&] { in.q.add(1.0); }); };
    if (r % 2 == 0) {
      do_bridge(), do_python(), do_cpp();
    } else {
      do_cpp(), do_python(), do_bridge();
    }
    bridge.push_back(b), python.push_back(p), cpp.push_back(x);
    fmt::print("{:>5}  {:>8.3f}  {:>8.3f}  {:>8.3f}\n", r + 1, b, p, x);
  }
  const auto [bmin, bmax] = std::minmax_element(bridge.begin(), bridge.end());
  fmt::print("median  bridge {:.3f} ({:.3f}..{:.3f})  python loop {:.3f}  c++ {:.3f}\n",
             median(bridge), *bmin, *bmax, median(python), median(cpp));
  fmt::print("bridge - python loop: {:+.3f} us a call; bridge - c++: {:+.3f} us a call\n",
             median(bridge) - median(python), median(bridge) - median(cpp));
  std::remove(file.c_str());
  return 0;
#endif
}
