#!/usr/bin/env bash
# Builds the stages that need no LibTorch, with their unit tests, under AddressSanitizer and
# UndefinedBehaviorSanitizer in a build folder of their own, and runs the tests there: a crash
# that a plain build survives by luck (a read past a buffer, a stack overflow, signed overflow)
# fails here. The YAML loader's fuzz test, the store's damaged-database tests and the import
# tests are the ones this exists for; the rest come along because they cost little.
#
#   ci/sanitize.sh                 # build (incremental) and run every unit test
#   ci/sanitize.sh -ts='scenario*' # arguments go to the doctest binary
#
# ATTNPROF_SANITIZE_BUILD sets the folder (default ./build-sanitize). The first build compiles
# the host stages once more (no ccache hit: the flags differ); later ones are incremental.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
bash "$here/setup.sh" >&2
# shellcheck source=ci/env.sh
source "$here/env.sh"
build="${ATTNPROF_SANITIZE_BUILD:-$root/build-sanitize}"
# -O1 keeps the sanitized tests fast enough to run on every push; frame pointers make the
# reports' stacks readable. -fno-sanitize-recover turns every UBSan finding into a failure.
flags="-O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DATTNPROF_TORCH=OFF \
    -DATTNPROF_CUDA=OFF -DATTNPROF_BENCH=OFF -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >&2
fi
cmake --build "$build" --target attnprof_unit_tests --parallel "${ATTNPROF_JOBS:-$(nproc)}" >&2
# detect_leaks: a leak is a finding too. The fork()-based store tests run under ASan as well.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
exec "$build/tests/attnprof_unit_tests" "$@"
