#!/usr/bin/env bash
# Keeps the path of a machine without a CUDA toolkit from rotting where CI has one: hides the
# system toolkit in a private mount namespace, lets ci/setup.sh add NVIDIA's compiler wheels to
# the venv, configures the whole project against the venv's toolkit (LibTorch's CMake package
# included, which is what a toolkit-less machine fails on first), then builds and runs
# tests/cuda: our .cu kernels and the CUPTI stage, compiled by the wheels' nvcc, linked and
# loaded from the venv. No LibTorch unit is compiled, so it stays cheap: the wheels stay in the
# venv (installed once), the build in <build>-pip-toolkit, its objects in ccache.
# Exit codes: 0 passed, 1 the pip toolkit path is broken, 3 could not hide the system toolkit.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
say() { printf 'pip-toolkit-check: %s\n' "$*" >&2; }
# The caller's toolkit choice must not leak in: ci/env.sh decides, as on a fresh machine.
unset CUDAToolkit_ROOT CUDACXX CUDA_HOME CUDA_PATH
# shellcheck source=ci/env.sh
source "$here/env.sh"

if [ -z "${ATTNPROF_TOOLKIT_HIDDEN:-}" ] && system="$(attnprof_cuda_system)"; then
  # A toolkit under /usr/local also leaves headers, libraries and nvcc wrappers in /usr/local's
  # include, lib and bin, on the compiler's and linker's default paths; only hiding all of
  # /usr/local makes this machine look like a fresh one (whose /usr/local is empty).
  system="$(readlink -f "$system")"
  if [[ "$system" != /usr/local/* ]]; then
    say "cannot hide the system CUDA toolkit at $system (only one under /usr/local)"
    exit 3
  fi
  for keep in "$root" "$ATTNPROF_HOME" "$(readlink -f "$ATTNPROF_VENV/bin/python" || true)"; do
    if [[ "$(readlink -f "$keep" || true)" == /usr/local/* ]]; then
      say "cannot hide /usr/local: $keep lives there"
      exit 3
    fi
  done
  userns=()
  [ "$(id -u)" -eq 0 ] || userns=(--map-root-user)
  hide=(unshare --mount --propagation private "${userns[@]}")
  if ! "${hide[@]}" mount -t tmpfs -o size=1m attnprof-no-cuda /usr/local 2>/dev/null; then
    say "cannot hide $system: unshare or mount refused (run as root, or where user" \
        "namespaces are allowed)"
    exit 3
  fi
  say "hiding $system (all of /usr/local) in a private mount namespace"
  exec "${hide[@]}" env ATTNPROF_TOOLKIT_HIDDEN=1 bash -c \
    'mount -t tmpfs -o size=1m attnprof-no-cuda /usr/local && exec bash "$0" "$@"' \
    "${BASH_SOURCE[0]}" "$@"
fi
if system="$(attnprof_cuda_system)"; then
  say "a system CUDA toolkit is still visible at $system"
  exit 3
fi

bash "$here/setup.sh" >&2
# shellcheck source=ci/env.sh
source "$here/env.sh"
venv_cuda="$(attnprof_cuda_venv)"
if [ "${CUDAToolkit_ROOT:-}" != "$venv_cuda" ]; then
  say "FAILED: ci/env.sh chose '${CUDAToolkit_ROOT:-}', not the venv's toolkit $venv_cuda"
  exit 1
fi

build="${ATTNPROF_BUILD:-$root/build}-pip-toolkit"
# One architecture is enough to prove the compiler works; the benchmarks are not needed.
mkdir -p "$build"
log="$build/configure.log"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DATTNPROF_BENCH=OFF \
  >"$log" 2>&1 || { cat "$log" >&2; say "FAILED: configure"; exit 1; }
said="$(grep -F 'attnprof: CUDA' "$log" || true)"
say "configure: ${said#-- }"
if ! grep -qF "#define ATTNPROF_CUDA_TOOLKIT_ROOT \"$venv_cuda\"" \
       "$build/generated/attnprof/cuda_toolkit.h"; then
  say "FAILED: the build did not record $venv_cuda as its toolkit"
  exit 1
fi
cmake --build "$build" --target attnprof_cuda_tests --parallel "${ATTNPROF_JOBS:-$(nproc)}" >&2 ||
  { say "FAILED: build"; exit 1; }
# Loads libcudart and libcupti from the venv (the binary's RUNPATH), and runs every CUPTI test
# that needs no GPU.
"$build/tests/attnprof_cuda_tests" >&2 || { say "FAILED: tests/cuda"; exit 1; }
say "passed: the whole toolchain came from the venv ($venv_cuda)"
