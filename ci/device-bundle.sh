#!/usr/bin/env bash
# Packs what a GPU check needs into .device/ (git-ignored), for a machine that has a GPU, the
# NVIDIA driver and a torch 2.11 cu130 install but none of our build dependencies (the lent H200
# machines: nothing can be installed there). Binaries are built here (same x86-64), stripped;
# the shared libraries such a machine lacks (yaml-cpp, fmt) travel beside them. LibTorch and the
# CUDA libraries are the machine's own (same torch version, same CUDA 13.0).
# Then: run `bash ci/device-check.sh` there with .device carried.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTNPROF_BUILD:-$root/build}"
out="$root/.device"
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
# attnprof runs every kernel in attnprof-worker, which it finds beside itself: both travel.
cmake --build "$build" --target attnprof attnprof-worker attnprof_device_tests \
  attnprof_test_plugin bench_torch_kernels bench_torch_trace bench_torch_agreement \
  bench_torch_timers >&2
for b in attnprof attnprof-worker tests/attnprof_device_tests bench/bench_torch_kernels bench/bench_torch_trace \
         bench/bench_torch_agreement bench/bench_torch_timers; do
  strip --strip-debug -o "$out/bin/$(basename "$b")" "$build/$b"
done
cp "$build"/tests/plugin/libattnprof_test_plugin.so "$out/lib/"
# The system libraries our binaries need that a bare CUDA image does not have.
for lib in libyaml-cpp.so.0.7 libfmt.so.9; do
  cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')" "$out/lib/"
done
du -sh "$out" >&2
