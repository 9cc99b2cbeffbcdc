#!/usr/bin/env bash
# Configures and builds attnprof into ./build (or $ATTNPROF_BUILD), after ci/setup.sh has made
# sure everything is installed. Incremental: a second call rebuilds only what changed.
# Usage: ci/build.sh [TARGET...]   the given targets (default: all, the tests included). A
# target this build does not define is skipped with a note, so a caller can name targets that
# only some versions of the tree have.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
bash "$here/setup.sh" >&2
# shellcheck source=ci/env.sh
source "$here/env.sh"
build="${ATTNPROF_BUILD:-$root/build}"
# Configure when there is no build yet, or when ATTNPROF_CMAKE_ARGS changed since the last time.
stamp="$build/.attnprof-cmake-args"
if [ ! -f "$build/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${ATTNPROF_CMAKE_ARGS:-}" ]; then
  cmake -S "$root" -B "$build" -G Ninja ${ATTNPROF_CMAKE_ARGS:-} >&2
  printf '%s' "${ATTNPROF_CMAKE_ARGS:-}" >"$stamp"
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
