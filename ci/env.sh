# Sourced by ci/*.sh: where attnprof's toolchain lives. Override any of these in the environment.
# HOME may be unset in a bare CI environment: fall back to the account's home folder.
export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
export ATTNPROF_HOME="${ATTNPROF_HOME:-$HOME/.cache/attnprof}"
export ATTNPROF_VENV="${ATTNPROF_VENV:-$ATTNPROF_HOME/venv}"
_attnprof_ci="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# --- Which torch -------------------------------------------------------------------------------
# attnprof builds against one torch (its LibTorch CMake package and libraries). The first rule
# that applies chooses it:
#   1. ATTNPROF_PYTHON=/path/to/python: that python's torch ("ATTNPROF_PYTHON"). An explicit
#      choice is never replaced: ci/setup.sh fails, saying so, when that python has no torch.
#   2. An active venv (VIRTUAL_ENV) whose python has torch ("active venv"). One without torch is
#      passed over with a note: a venv activated for other tools changes nothing.
#   3. The pinned venv, $ATTNPROF_VENV, with ci/torch-version.txt's torch, which ci/setup.sh
#      installs ("pinned venv"). Activating it is the same as not.
# A user's torch needs a CUDA toolkit of its own CUDA major (a system one, or CUDAToolkit_ROOT);
# a CPU build of torch builds attnprof without CUDA. ci/build.sh hands the choice to CMake
# (ATTNPROF_PYTHON, ATTNPROF_TORCH_SOURCE) and configures the build folder afresh when it
# changes; `attnprof env` prints it ("torch source:").
# Results: ATTNPROF_TORCH_SOURCE, ATTNPROF_TORCH_PYTHON, ATTNPROF_TORCH_PACKAGE (torch's folder;
# empty while the pinned venv is not installed), ATTNPROF_TORCH_VERSION, ATTNPROF_TORCH_CUDA
# (the CUDA version torch was built for, empty for a CPU build), and ATTNPROF_TORCH_NOTE or
# ATTNPROF_TORCH_ERROR for ci/setup.sh to print.

# attnprof_torch_package PY: prints the folder of PY's torch package, found the way `import torch`
# would find it but without importing it (milliseconds, where the import takes seconds); fails
# when PY has no torch.
attnprof_torch_package() {
  "$1" -c 'import importlib.util, os, sys
s = importlib.util.find_spec("torch")
if s is None or not s.origin:
    sys.exit(1)
print(os.path.dirname(s.origin))' 2>/dev/null
}
# attnprof_torch_field PACKAGE NAME: a field of torch's generated version.py ("__version__":
# "2.11.0+cu130"; "cuda": "13.0", empty for a CPU build), read as text, not imported.
attnprof_torch_field() {
  sed -n "s/^$2\(: [^=]*\)\{0,1\} = '\(.*\)'\$/\2/p" "$1/version.py" 2>/dev/null
}

unset ATTNPROF_TORCH_NOTE ATTNPROF_TORCH_ERROR
ATTNPROF_TORCH_PACKAGE=""
if [ -n "${ATTNPROF_PYTHON:-}" ]; then
  ATTNPROF_TORCH_SOURCE="ATTNPROF_PYTHON"
  # A bare name (python3) is recorded as the path it resolves to.
  ATTNPROF_TORCH_PYTHON="$(command -v "$ATTNPROF_PYTHON" || printf '%s' "$ATTNPROF_PYTHON")"
  if ! ATTNPROF_TORCH_PACKAGE="$(attnprof_torch_package "$ATTNPROF_TORCH_PYTHON")"; then
    ATTNPROF_TORCH_ERROR="ATTNPROF_PYTHON=$ATTNPROF_PYTHON cannot import torch (install it"
    ATTNPROF_TORCH_ERROR+=" there, or unset ATTNPROF_PYTHON for the pinned venv)"
  fi
elif [ -n "${VIRTUAL_ENV:-}" ] && ! [ "$VIRTUAL_ENV" -ef "$ATTNPROF_VENV" ] &&
     ATTNPROF_TORCH_PACKAGE="$(attnprof_torch_package "$VIRTUAL_ENV/bin/python")"; then
  ATTNPROF_TORCH_SOURCE="active venv"
  ATTNPROF_TORCH_PYTHON="$VIRTUAL_ENV/bin/python"
else
  if [ -n "${VIRTUAL_ENV:-}" ] && ! [ "$VIRTUAL_ENV" -ef "$ATTNPROF_VENV" ]; then
    ATTNPROF_TORCH_NOTE="the active venv $VIRTUAL_ENV has no torch: using the pinned venv"
  fi
  ATTNPROF_TORCH_SOURCE="pinned venv"
  ATTNPROF_TORCH_PYTHON="$ATTNPROF_VENV/bin/python"
  ATTNPROF_TORCH_PACKAGE="$(attnprof_torch_package "$ATTNPROF_TORCH_PYTHON" || true)"
fi
ATTNPROF_TORCH_VERSION=""
ATTNPROF_TORCH_CUDA=""
if [ -n "$ATTNPROF_TORCH_PACKAGE" ]; then
  ATTNPROF_TORCH_VERSION="$(attnprof_torch_field "$ATTNPROF_TORCH_PACKAGE" __version__)"
  ATTNPROF_TORCH_CUDA="$(attnprof_torch_field "$ATTNPROF_TORCH_PACKAGE" cuda)"
fi
export ATTNPROF_TORCH_SOURCE ATTNPROF_TORCH_PYTHON ATTNPROF_TORCH_PACKAGE ATTNPROF_TORCH_VERSION \
       ATTNPROF_TORCH_CUDA ATTNPROF_TORCH_NOTE ATTNPROF_TORCH_ERROR

# --- The CUDA toolkit ----------------------------------------------------------------------
# The pinned torch wheel is a CUDA build, and its CMake package needs a toolkit at configure
# time even where there is no GPU. Any toolkit of the wheel's CUDA major serves (CUDA keeps
# its ABI within a major), so a system one is used when present; otherwise ci/setup.sh adds
# the compiler wheels of ci/cuda-wheels.txt to the venv, whose nvidia/cu<major> folder then
# is a whole toolkit: the torch wheel already put the runtime, CUPTI and NVTX there.
# A user's torch may be built for another CUDA major than the pinned one: its own decides.
ATTNPROF_CUDA_MAJOR="$(sed -n 's/^nvidia-cuda-nvcc==\([0-9]*\)\..*/\1/p' "$_attnprof_ci/cuda-wheels.txt")"
if [ "$ATTNPROF_TORCH_SOURCE" != "pinned venv" ] && [ -n "$ATTNPROF_TORCH_CUDA" ]; then
  ATTNPROF_CUDA_MAJOR="${ATTNPROF_TORCH_CUDA%%.*}"
fi
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

# The choice: the caller's CUDAToolkit_ROOT as given, else a system toolkit, else the pinned
# venv's (for the pinned torch only: ci/setup.sh adds compiler wheels to no other environment).
# None for a CPU build of torch.
if [ -z "${CUDAToolkit_ROOT:-}" ] &&
   { [ -z "$ATTNPROF_TORCH_PACKAGE" ] || [ -n "$ATTNPROF_TORCH_CUDA" ]; }; then
  if _root="$(attnprof_cuda_system)" ||
     { [ "$ATTNPROF_TORCH_SOURCE" = "pinned venv" ] && _root="$(attnprof_cuda_venv)" &&
       attnprof_cuda_usable "$_root"; }; then
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
