#!/usr/bin/env bash
# build.sh: the repository's build command: build/libbusy.so, the plugin, against the LibTorch
# of $Torch_DIR (attnprof's gate and bisect export it). Each source compiles on its own, through
# ccache where there is one, so a tree whose sources did not change compiles nothing.
set -euo pipefail
torch="$(cd "$Torch_DIR/../../.." && pwd)"
cxx=(c++)
command -v ccache >/dev/null && cxx=(ccache c++)
mkdir -p build
flags=(-O2 -std=c++17 -fPIC ${CXXFLAGS:-})
"${cxx[@]}" "${flags[@]}" -c kernel.cpp -o build/kernel.o
"${cxx[@]}" "${flags[@]}" -isystem "$torch/include" -isystem "$torch/include/torch/csrc/api/include" \
  -c attention.cpp -o build/attention.o
c++ -shared build/attention.o build/kernel.o -L"$torch/lib" -Wl,-rpath,"$torch/lib" \
  -ltorch -ltorch_cpu -lc10 -o build/libbusy.so
