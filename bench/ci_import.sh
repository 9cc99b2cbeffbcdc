#!/usr/bin/env bash
# What a CI job pays to import history from the history branch, at several branch sizes, as a
# job on a fresh runner pays it: a new git repository each time (the runner's checkout; git
# objects are not cached between jobs), the slice's history and its list of imported files
# carried from job to job (the action caches them), side by side in one run:
#   fetch alone      `git fetch` of the branch, what every job pays before it imports anything
#   slice, first     ci/github/history.sh fetch with an empty cache: one environment's newest
#                    $ATTNPROF_HISTORY_WINDOW files (what the record and run jobs import)
#   slice, next      the same in a fresh repository with the first job's cache: nothing new
#   whole branch     history.sh fetch-all in a fresh repository (what every job imported
#                    before slices)
#
#   bench/ci_import.sh ATTNPROF [SIZES] [ENVS]   e.g. bench/ci_import.sh build/attnprof 10000,100000 4
#
# Each size N gets a bare repository whose attnprof-history branch holds N runs of one real
# smoke-suite run (bench/synth_history.py --git-stream, spread over ENVS environments, default
# 4, cost rows dropped as a long history's prune would, 20 samples a case as a quiet machine
# takes), kept under $TMPDIR/attnprof-ci-import and reused. The remote is a local folder: a
# runner fetching from GitHub also waits for the pack's bytes (its size is printed). Prints
# seconds and the imported databases' sizes. Not a test: run on purpose.
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
echo "| runs on the branch | environments | branch pack | fetch alone | slice, first job | slice, next job | whole branch | slice db | whole db |"
echo "|---|---|---|---|---|---|---|---|---|"
IFS=, read -ra ns <<<"$sizes"
export ATTNPROF_BIN="$attnprof"
for n in "${ns[@]}"; do
  remote="$work/remote-$n-$envs.git"
  if [ ! -d "$remote" ]; then
    git init --quiet --bare "$remote.part"
    python3 "$here/synth_history.py" "$template" --runs "$n" --envs "$envs" --no-cost \
        --quiet 20 --git-stream | git -C "$remote.part" fast-import --quiet
    git -C "$remote.part" repack -a -d -q  # one pack, as a hosted remote serves it
    mv "$remote.part" "$remote"
  fi
  # The fingerprint of the first environment: the folder names under history/<suite>/.
  fp="$(git -C "$remote" ls-tree --name-only "attnprof-history:history/smoke" | head -n 1)"
  cache="$(mktemp -d "$work/cache.XXXXXX")"
  fresh() {  # a new job's repository: prints its folder
    local job
    job="$(mktemp -d "$work/job.XXXXXX")"
    git init --quiet "$job"
    git -C "$job" remote add origin "$remote"
    echo "$job"
  }
  job="$(fresh)"
  alone="$(cd "$job" && seconds git fetch --quiet --no-tags origin \
    "+refs/heads/attnprof-history:refs/attnprof/history")"
  rm -rf "$job"
  job="$(fresh)"
  first="$(cd "$job" && seconds bash "$history_sh" fetch "$cache/slice.db" "$fp")"
  rm -rf "$job"
  job="$(fresh)"
  next="$(cd "$job" && seconds bash "$history_sh" fetch "$cache/slice.db" "$fp")"
  rm -rf "$job"
  job="$(fresh)"
  whole="$(cd "$job" && seconds bash "$history_sh" fetch-all "$cache/whole.db")"
  rm -rf "$job"
  mib() { awk -v b="$(du -sb "$@" | awk '{ s += $1 } END { print s }')" \
              'BEGIN { printf "%.0f MiB", b / 1048576 }'; }
  echo "| $n | $envs | $(mib "$remote/objects/pack") | $alone s | $first s | $next s | $whole s |" \
       "$(mib "$cache/slice.db") | $(mib "$cache/whole.db") |"
  rm -rf "$cache"
done
echo "load average at end: $(cut -d' ' -f1 /proc/loadavg)"
