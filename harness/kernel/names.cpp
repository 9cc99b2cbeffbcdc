// The built-in kernel names without LibTorch (names.h): what `validate` and `list` check
// scenarios against in attnprof, kept equal to the worker's registry by a test.
#include "harness/kernel/names.h"

namespace attnprof::kernel {

std::vector<std::string> builtin_names() {
  // Registry order (registry.cpp): SDPA, eager, then the families built from kernels/.
  std::vector<std::string> names = {"sdpa.auto",      "sdpa.math",  "sdpa.flash",
                                    "sdpa.efficient", "sdpa.cudnn", "eager"};
#ifdef ATTNPROF_HAVE_KERNELS_CPU
  names.insert(names.end(), {"cpu.naive", "cpu.flash"});
#endif
#ifdef ATTNPROF_HAVE_KERNELS_CUDA
  names.insert(names.end(), {"cuda.naive", "cuda.flash", "cuda.decode", "cuda.varlen"});
#endif
  return names;
}

}  // namespace attnprof::kernel
