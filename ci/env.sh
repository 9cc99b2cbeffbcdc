# Sourced by ci/*.sh: where attnprof's toolchain lives. Override any of these in the environment.
# HOME may be unset in a bare CI environment: fall back to the account's home folder.
export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
export ATTNPROF_HOME="${ATTNPROF_HOME:-$HOME/.cache/attnprof}"
export ATTNPROF_VENV="${ATTNPROF_VENV:-$ATTNPROF_HOME/venv}"
if [ -z "${CUDAToolkit_ROOT:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDAToolkit_ROOT=/usr/local/cuda
fi
# CMake finds nvcc through CUDACXX even where /usr/local/cuda/bin is not on PATH.
if [ -z "${CUDACXX:-}" ] && [ -n "${CUDAToolkit_ROOT:-}" ] && [ -x "$CUDAToolkit_ROOT/bin/nvcc" ]; then
  export CUDACXX="$CUDAToolkit_ROOT/bin/nvcc"
fi
export CCACHE_DIR="${CCACHE_DIR:-$ATTNPROF_HOME/ccache}"
# Let ccache hit across build folders and fresh clones in other places (CI clones anew):
# paths under the checkout are hashed relative to it, and the build folder is not hashed.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
