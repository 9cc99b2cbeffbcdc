# Sourced by ci/*.sh: where attnprof's toolchain lives. Override any of these in the environment.
# HOME may be unset in a bare CI environment: fall back to the account's home folder.
export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
export ATTNPROF_HOME="${ATTNPROF_HOME:-$HOME/.cache/attnprof}"
export ATTNPROF_VENV="${ATTNPROF_VENV:-$ATTNPROF_HOME/venv}"
_attnprof_ci="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# --- The CUDA toolkit ----------------------------------------------------------------------
# The pinned torch wheel is a CUDA build, and its CMake package needs a toolkit at configure
# time even where there is no GPU. Any toolkit of the wheel's CUDA major serves (CUDA keeps
# its ABI within a major), so a system one is used when present; otherwise ci/setup.sh adds
# the compiler wheels of ci/cuda-wheels.txt to the venv, whose nvidia/cu<major> folder then
# is a whole toolkit: the torch wheel already put the runtime, CUPTI and NVTX there.
ATTNPROF_CUDA_MAJOR="$(sed -n 's/^nvidia-cuda-nvcc==\([0-9]*\)\..*/\1/p' "$_attnprof_ci/cuda-wheels.txt")"
export ATTNPROF_CUDA_MAJOR

# attnprof_cuda_usable ROOT: whether ROOT is a toolkit CMake can use for us: an nvcc of our
# major, and CUPTI's header where FindCUDAToolkit looks for it.
attnprof_cuda_usable() {
  local root="$1" h
  [ -n "$root" ] && [ -x "$root/bin/nvcc" ] || return 1
  # Read whole, then matched: `| grep -q` may close the pipe early, and under pipefail a writer
  # killed by SIGPIPE fails the check.
  [[ "$("$root/bin/nvcc" --version 2>/dev/null)" == *"release $ATTNPROF_CUDA_MAJOR."* ]] || return 1
  for h in "$root"/include/cupti.h "$root"/extras/CUPTI/include/cupti.h \
           "$root"/targets/*/include/cupti.h; do
    [ -f "$h" ] && return 0
  done
  return 1
}

# attnprof_cuda_system: prints the first usable system toolkit (/usr/local/cuda, then the one
# whose nvcc is on PATH); fails when there is none.
attnprof_cuda_system() {
  local candidates=(/usr/local/cuda) nvcc root
  if nvcc="$(command -v nvcc)"; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$nvcc")")")")
  fi
  for root in "${candidates[@]}"; do
    if attnprof_cuda_usable "$root"; then
      printf '%s\n' "$root"
      return 0
    fi
  done
  return 1
}

# attnprof_cuda_venv: prints where the compiler wheels put (or would put) the toolkit.
attnprof_cuda_venv() {
  local site
  for site in "$ATTNPROF_VENV"/lib/python3*/site-packages; do
    [ -d "$site" ] || continue
    printf '%s\n' "$site/nvidia/cu$ATTNPROF_CUDA_MAJOR"
    return 0
  done
  return 1
}

# The choice: the caller's CUDAToolkit_ROOT as given, else a system toolkit, else the venv's.
if [ -z "${CUDAToolkit_ROOT:-}" ]; then
  if _root="$(attnprof_cuda_system)" ||
     { _root="$(attnprof_cuda_venv)" && attnprof_cuda_usable "$_root"; }; then
    export CUDAToolkit_ROOT="$_root"
  fi
  unset _root
fi
# CMake finds nvcc through CUDACXX even where the toolkit's bin folder is not on PATH.
if [ -z "${CUDACXX:-}" ] && [ -n "${CUDAToolkit_ROOT:-}" ] && [ -x "$CUDAToolkit_ROOT/bin/nvcc" ]; then
  export CUDACXX="$CUDAToolkit_ROOT/bin/nvcc"
fi

export CCACHE_DIR="${CCACHE_DIR:-$ATTNPROF_HOME/ccache}"
# Let ccache hit across build folders and fresh clones in other places (CI clones anew):
# paths under the checkout are hashed relative to it, and the build folder is not hashed.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$_attnprof_ci")}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
