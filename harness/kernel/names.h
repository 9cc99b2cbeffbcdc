// The built-in kernel names, without LibTorch: what `attnprof validate` and `attnprof list`
// check scenarios against when no worker is started. Plugin ops ("op:ns::name") are checked
// by the worker that loads them. A test keeps this list equal to the registry's.
#pragma once

#include <string>
#include <vector>

namespace attnprof::kernel {

std::vector<std::string> builtin_names();

}  // namespace attnprof::kernel
