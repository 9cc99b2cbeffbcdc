#!/usr/bin/env bash
# Configures and builds attnprof into ./build (or $ATTNPROF_BUILD), after ci/setup.sh has made
# sure everything is installed. Incremental: a second call rebuilds only what changed.
# Usage: ci/build.sh [TARGET...]   the given targets (default: all, the tests included). A
# target this build does not define is skipped with a note, so a caller can name targets that
# only some versions of the tree have.
# Which torch: ATTNPROF_PYTHON=/path/to/python's, else the active venv's (VIRTUAL_ENV) if it has
# torch, else the pinned venv's (ci/env.sh has the rule). The build records it; `attnprof env`
# prints it ("torch source:").
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
bash "$here/setup.sh" >&2
# shellcheck source=ci/env.sh
source "$here/env.sh"
build="${ATTNPROF_BUILD:-$root/build}"
# The torch ci/env.sh chose, for CMake (cmake/Torch.cmake); a CPU build of torch builds attnprof
# without CUDA. ATTNPROF_CMAKE_ARGS come after, so that they can override.
torch_args=("-DATTNPROF_PYTHON=$ATTNPROF_TORCH_PYTHON"
            "-DATTNPROF_TORCH_SOURCE=$ATTNPROF_TORCH_SOURCE")
if [ -n "$ATTNPROF_TORCH_PACKAGE" ] && [ -z "$ATTNPROF_TORCH_CUDA" ]; then
  torch_args+=(-DATTNPROF_CUDA=OFF)
fi
# Configure when there is no build yet, or when ATTNPROF_CMAKE_ARGS or the torch (which python,
# which version) changed since the last time. Then afresh (a new CMakeCache.txt): LibTorch's
# package caches the paths it found, and an option dropped from ATTNPROF_CMAKE_ARGS would stay
# in the cache. Objects whose compile command is unchanged are not rebuilt.
stamp="$build/.attnprof-cmake-args"
want="$(printf '%s\ntorch: %s %s %s' "${ATTNPROF_CMAKE_ARGS:-}" "$ATTNPROF_TORCH_SOURCE" \
        "$ATTNPROF_TORCH_PYTHON" "$ATTNPROF_TORCH_VERSION")"
if [ ! -f "$build/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  fresh=()
  [ ! -f "$build/CMakeCache.txt" ] || fresh=(--fresh)
  # shellcheck disable=SC2086 # ATTNPROF_CMAKE_ARGS is a list of words
  cmake "${fresh[@]}" -S "$root" -B "$build" -G Ninja "${torch_args[@]}" \
    ${ATTNPROF_CMAKE_ARGS:-} >&2
  printf '%s' "$want" >"$stamp"
fi
targets=()
for t in "$@"; do
  if ninja -C "$build" -t query "$t" >/dev/null 2>&1; then
    targets+=(--target "$t")
  else
    printf 'build: no target %s in this build; skipped\n' "$t" >&2
  fi
done
if [ $# -gt 0 ] && [ ${#targets[@]} -eq 0 ]; then
  printf 'build: none of the targets %s exists in %s\n' "$*" "$build" >&2
  exit 2
fi
cmake --build "$build" --parallel "${ATTNPROF_JOBS:-$(nproc)}" "${targets[@]}" >&2
