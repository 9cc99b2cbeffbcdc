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
# Configure when there is no build yet, or when ATTNPROF_CMAKE_ARGS changed since the last time.
stamp="$build/.attnprof-cmake-args"
if [ ! -f "$build/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${ATTNPROF_CMAKE_ARGS:-}" ]; then
  cmake -S "$root" -B "$build" -G Ninja ${ATTNPROF_CMAKE_ARGS:-} >&2
  printf '%s' "${ATTNPROF_CMAKE_ARGS:-}" >"$stamp"
fi
cmake --build "$build" --parallel "${ATTNPROF_JOBS:-$(nproc)}" >&2
