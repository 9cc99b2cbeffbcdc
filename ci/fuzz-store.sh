#!/usr/bin/env bash
# Fuzzes the store's readers for a bounded time: tests/fuzz/fuzz_store.cpp under libFuzzer with
# AddressSanitizer and UBSan, in a clang build of the host stages of its own (build-fuzz/, or
# $ATTNPROF_FUZZ_BUILD; ccache keeps later builds short), starting from tests/data/store-corpus
# (damaged histories and exports, made by tests/fuzz/make-corpus.sh). Prints libFuzzer's
# executions and coverage; a finding (a crash, a sanitizer report, an exception that is not a
# refusal, an input slower than 10 s) fails with its input saved under the build folder.
#
#   ci/fuzz-store.sh [SECONDS]     # default 60
#
# Skipped (exit 0, with a note) where clang has no libFuzzer.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
seconds="${1:-60}"
build="${ATTNPROF_FUZZ_BUILD:-$root/build-fuzz}"
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }\n' \
  >"$probe/p.cpp"
if ! clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
  echo "fuzz-store: skipped: clang++ with libFuzzer (-fsanitize=fuzzer) is not installed"
  exit 0
fi
flags="-O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
flags+=" -fno-omit-frame-pointer"
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DATTNPROF_TORCH=OFF -DATTNPROF_CUDA=OFF -DATTNPROF_BENCH=OFF -DATTNPROF_TESTS=OFF \
    -DATTNPROF_FUZZ=ON -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >&2
fi
cmake --build "$build" --target attnprof_fuzz_store --parallel "${ATTNPROF_JOBS:-$(nproc)}" >&2
# The corpus grows in a copy: the committed seeds stay as they are.
cp "$root"/tests/data/store-corpus/* "$probe/"
rm -f "$probe/p" "$probe/p.cpp"
mkdir -p "$build/findings"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
rc=0
"$build/attnprof_fuzz_store" "$probe" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/findings/" \
  >"$build/fuzz.log" 2>&1 || rc=$?
grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' \
  "$build/fuzz.log" || true
if [ "$rc" != 0 ]; then
  tail -n 60 "$build/fuzz.log" >&2
  echo "fuzz-store: a finding (exit $rc); its input is in $build/findings/" >&2
  exit 1
fi
echo "fuzz-store: no findings in ${seconds} s"
