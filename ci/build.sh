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
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja ${ATTNPROF_CMAKE_ARGS:-} >&2
fi
cmake --build "$build" --parallel "${ATTNPROF_JOBS:-$(nproc)}" >&2
