// Registration functions of the built-in variant families; registry.cpp calls each once.
#pragma once

#include <stdexcept>
#include <string>

#include "worker/kernel/registry.h"

namespace attnprof::kernel {

// Thrown by a launch when the variant turns out not to support these inputs at run time (e.g.
// a forced SDPA backend that rejects the shapes): the runner records a skip with the reason.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void register_sdpa(Registry&);   // sdpa.auto, sdpa.math, sdpa.flash, sdpa.efficient, sdpa.cudnn
void register_eager(Registry&);  // eager: matmul, scale, mask, softmax, matmul as ATen ops
void register_cpu(Registry&);    // cpu.naive, cpu.flash (kernels/cpu)
void register_cuda(Registry&);   // cuda.naive, cuda.flash, cuda.decode, cuda.varlen (kernels/cuda)

bool is_cuda_device(const core::Case&);

// The variant of an "aoti:PATH.pt2" kernel (variants/aoti.cpp), made on first use by lookup().
Variant make_package_variant(std::string_view name);

// The variant of a "py:PATH.py:NAME[@MODE]" kernel (variants/python.cpp), made on first use by
// lookup(); in a worker built without Python, one that skips every case saying so.
Variant make_python_variant(std::string_view name);
// What py: kernels run with in this worker, for `attnprof env`: "Python 3.11.7 of
// /path/bin/python, embedded", or why they are off.
std::string python_kernels_status();

}  // namespace attnprof::kernel
