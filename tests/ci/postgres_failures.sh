#!/usr/bin/env bash
# attnprof push and pull where something fails, against a PostgreSQL cluster of this test's
# own (pg_cluster.sh): 8 concurrent first pushes to an empty server, a push that cannot read a
# run (exit 3 naming it) or is asked for a run that is not there (exit 2). Needs no worker: the
# runs come from tests/data/db/v1.db.
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

echo "== a push that cannot read a run: the rest pushed, exit 3 naming it"
damaged="$(sed -n 3p src.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["id"])')"
cp src.db bad.db
python3 - bad.db "$damaged" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE cases SET params = '{bad' WHERE run_id = ?", (sys.argv[2],))
db.commit()
PY
rc push_bad "$attnprof" push --db bad.db --to "$url"
[ "$push_bad" = 3 ] || { cat push_bad.log; fail "a push that left out a damaged run exited $push_bad"; }
expect push_bad.log "$url: 4 runs pushed, 0 already there, 0 conflicting"
expect push_bad.log "attnprof: left out 1 run(s) that cannot be read:"
expect push_bad.log "  bad.db: table cases, id "
expect push_bad.log "(run $damaged): column params cannot be read"
rc push_one "$attnprof" push --db bad.db --to "$url" --run "$damaged"
[ "$push_one" = 3 ] || { cat push_one.log; fail "push --run of a damaged run exited $push_one"; }
expect push_one.log "$url: 0 runs pushed, 0 already there, 0 conflicting"
expect push_one.log "(run $damaged): column params cannot be read"
[ "$(sql "SELECT count(*) FROM attnprof_runs WHERE id = '$damaged'")" = 0 ] || fail "the damaged run is on the server"

echo "== push --run of a run that is not there: exit 2 naming it, nothing sent"
before="$(sql 'SELECT count(*) FROM attnprof_runs')"
rc push_none "$attnprof" push --db src.db --to "$url" --run nosuchrun --run "$damaged"
[ "$push_none" = 2 ] || { cat push_none.log; fail "push --run nosuchrun exited $push_none"; }
expect push_none.log "src.db: no run nosuchrun in this history"
grep -q "runs pushed" push_none.log && fail "push --run nosuchrun pushed"
[ "$(sql 'SELECT count(*) FROM attnprof_runs')" = "$before" ] || fail "push --run nosuchrun sent runs"

echo "ok"
