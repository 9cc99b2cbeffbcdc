#!/usr/bin/env bash
# What a CI job pays to import history from the history branch, at several branch sizes: the
# slice the record and run jobs import (ci/github/history.sh fetch: one environment's newest
# $ATTNPROF_HISTORY_WINDOW files), the same job again with nothing new, and the whole branch
# (history.sh fetch-all: what every job imported before slices), side by side in one run.
#
#   bench/ci_import.sh ATTNPROF [SIZES] [ENVS]   e.g. bench/ci_import.sh build/attnprof 10000,100000 4
#
# Each size N gets a bare repository whose attnprof-history branch holds N runs of one real
# smoke-suite run (bench/synth_history.py --git-stream, spread over ENVS environments, default
# 4, cost rows dropped as a long history's prune would, 20 samples a case as a quiet machine
# takes), kept under $TMPDIR/attnprof-ci-import and reused. Prints seconds and the imported
# database's size. Not a test: run on purpose.
set -euo pipefail
attnprof="$(realpath "${1:?usage: ci_import.sh ATTNPROF [SIZES] [ENVS]}")"
sizes="${2:-10000,100000}"
envs="${3:-4}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
history_sh="$here/../ci/github/history.sh"
work="${TMPDIR:-/tmp}/attnprof-ci-import"
mkdir -p "$work"

template="$work/template.jsonl"
if [ ! -s "$template" ]; then
  "$attnprof" run --db "$work/template.db" --no-trace >/dev/null
  "$attnprof" export --db "$work/template.db" -o "$template"
fi

seconds() {  # runs "$@" quietly, prints its wall time in seconds
  local t0 t1
  t0="$(date +%s.%N)"
  "$@" >/dev/null
  t1="$(date +%s.%N)"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}

echo "load average at start: $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs;" \
     "window ${ATTNPROF_HISTORY_WINDOW:-200} files"
echo "| runs on the branch | environments | slice, first job | slice, nothing new | whole branch | slice db | whole db |"
echo "|---|---|---|---|---|---|---|"
IFS=, read -ra ns <<<"$sizes"
for n in "${ns[@]}"; do
  remote="$work/remote-$n-$envs.git"
  if [ ! -d "$remote" ]; then
    git init --quiet --bare "$remote.part"
    python3 "$here/synth_history.py" "$template" --runs "$n" --envs "$envs" --no-cost \
        --quiet 20 --git-stream | git -C "$remote.part" fast-import --quiet
    mv "$remote.part" "$remote"
  fi
  job="$(mktemp -d "$work/job.XXXXXX")"
  git init --quiet "$job"
  git -C "$job" remote add origin "$remote"
  # The fingerprint of the first environment: the folder names under history/<suite>/.
  fp="$(git -C "$remote" ls-tree --name-only "attnprof-history:history/smoke" | head -n 1)"
  export ATTNPROF_BIN="$attnprof"
  first="$(cd "$job" && seconds bash "$history_sh" fetch slice.db "$fp")"
  again="$(cd "$job" && seconds bash "$history_sh" fetch slice.db "$fp")"
  whole="$(cd "$job" && seconds bash "$history_sh" fetch-all whole.db)"
  mib() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }
  echo "| $n | $envs | $first s | $again s | $whole s | $(mib "$job/slice.db") | $(mib "$job/whole.db") |"
  rm -rf "$job"
done
echo "load average at end: $(cut -d' ' -f1 /proc/loadavg)"
