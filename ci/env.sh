# Sourced by ci/*.sh: where attnprof's toolchain lives. Override any of these in the environment.
export ATTNPROF_HOME="${ATTNPROF_HOME:-$HOME/.cache/attnprof}"
export ATTNPROF_VENV="${ATTNPROF_VENV:-$ATTNPROF_HOME/venv}"
if [ -z "${CUDAToolkit_ROOT:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDAToolkit_ROOT=/usr/local/cuda
fi
export CCACHE_DIR="${CCACHE_DIR:-$ATTNPROF_HOME/ccache}"
