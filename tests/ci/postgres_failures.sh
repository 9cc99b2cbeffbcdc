#!/usr/bin/env bash
# attnprof push and pull where something fails, against a PostgreSQL cluster of this test's
# own (pg_cluster.sh): 8 concurrent first pushes to an empty server. Needs no worker: the runs
# come from tests/data/db/v1.db.
#   postgres_failures.sh BUILD_DIR       (BUILD_DIR holds the attnprof executable)
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: postgres_failures.sh BUILD_DIR}" && pwd)"
attnprof="$build/attnprof"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "$1 lacks \"$2\""; }; }
# shellcheck source=tests/ci/pg_cluster.sh
source "$src/tests/ci/pg_cluster.sh"
mkdir "$tmp/w" && cd "$tmp/w"
# rc VAR CMD...: runs CMD with its output in VAR.log, its exit status in $VAR.
rc() { local name="$1"; shift; local s=0; "$@" >"$name.log" 2>&1 || s=$?; printf -v "$name" %s "$s"; }

cp "$src/tests/data/db/v1.db" template.db
"$attnprof" export --db template.db -o template.jsonl 2>/dev/null
synth() { python3 "$src/bench/synth_history.py" template.jsonl "$@"; }
synth --runs 5 --seed 1 --out src.jsonl
"$attnprof" import --db src.db src.jsonl >/dev/null

echo "== 8 concurrent first pushes to an empty server, three times: each exits 0"
for w in 1 2 3 4 5 6 7 8; do
  synth --runs 2 --seed "$((200 + w))" --out "w$w.jsonl"
  "$attnprof" import --db "w$w.db" "w$w.jsonl" >/dev/null
done
for round in 1 2 3; do
  sql "CREATE DATABASE empty$round" >/dev/null
  empty="postgresql:///empty$round?host=$tmp&user=attnprof"
  pids=()
  for w in 1 2 3 4 5 6 7 8; do
    "$attnprof" push --db "w$w.db" --to "$empty" >"first$round-$w.log" 2>&1 &
    pids+=($!)
  done
  for w in 1 2 3 4 5 6 7 8; do
    s=0; wait "${pids[$((w - 1))]}" || s=$?
    [ "$s" = 0 ] || { cat "first$round-$w.log"; fail "round $round: first push $w exited $s"; }
    expect "first$round-$w.log" "$empty: 2 runs pushed, 0 already there"
  done
  got="$(psql "$empty" -X -At -c 'SELECT count(*) FROM attnprof_runs' -c 'SELECT count(*) FROM attnprof_schema')"
  [ "$got" = "16"$'\n'"1" ] || fail "round $round: the server holds $got (runs, schema rows), not 16 and 1"
done

echo "ok"
