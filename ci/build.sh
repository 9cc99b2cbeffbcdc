#!/usr/bin/env bash
# Configures and builds attnprof into ./build (or $ATTNPROF_BUILD), after ci/setup.sh has made
# sure everything is installed. Incremental: a second call rebuilds only what changed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
bash "$here/setup.sh" >&2
# shellcheck source=ci/env.sh
source "$here/env.sh"
build="${ATTNPROF_BUILD:-$root/build}"
if ! command -v nvcc >/dev/null 2>&1 && [ -z "${CUDAToolkit_ROOT:-}" ] &&
   [[ "${ATTNPROF_CMAKE_ARGS:-}" != *ATTNPROF_CUDA=OFF* ]]; then
  cat >&2 <<'MSG'
build: no CUDA toolkit found (no nvcc on PATH, CUDAToolkit_ROOT unset).
  The pinned torch wheel is a CUDA 13.0 build, and its CMake package needs a CUDA toolkit at
  configure time even on a machine without a GPU. Either install CUDA 13.0 (nvcc, cudart, CUPTI,
  NVTX) and set CUDAToolkit_ROOT, or build against a CPU LibTorch:
    ATTNPROF_CMAKE_ARGS="-DATTNPROF_CUDA=OFF -DTorch_DIR=<libtorch>/share/cmake/Torch" ci/build.sh
MSG
  exit 3
fi
# Configure when there is no build yet, or when ATTNPROF_CMAKE_ARGS changed since the last time.
stamp="$build/.attnprof-cmake-args"
if [ ! -f "$build/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${ATTNPROF_CMAKE_ARGS:-}" ]; then
  cmake -S "$root" -B "$build" -G Ninja ${ATTNPROF_CMAKE_ARGS:-} >&2
  printf '%s' "${ATTNPROF_CMAKE_ARGS:-}" >"$stamp"
fi
cmake --build "$build" --parallel "${ATTNPROF_JOBS:-$(nproc)}" >&2
