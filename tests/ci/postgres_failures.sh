#!/usr/bin/env bash
# attnprof push and pull where something fails, against a PostgreSQL cluster of this test's
# own (pg_cluster.sh) and a loopback listener that accepts and never answers: 8 concurrent first
# pushes to an empty server, a push that cannot read a run (exit 3 naming it) or is asked for a
# run that is not there (exit 2), connect and statement timeouts (exit 3 naming the timeout,
# never a hang), and passwords never printed whatever the URL's form. Needs no worker: the
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
rc push_none_away "$attnprof" push --db src.db --to "postgresql:///postgres?host=$tmp/nowhere" --run nosuchrun
[ "$push_none_away" = 2 ] || { cat push_none_away.log; fail "push --run nosuchrun, no server, exited $push_none_away"; }
expect push_none_away.log "src.db: no run nosuchrun in this history"

echo "== a server that accepts and never answers: the connect timeout, exit 3, named"
python3 - >listener.port <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])  # accepted, never answered
PY
listener=$!
for _ in $(seq 100); do [ -s listener.port ] && break; sleep 0.1; done
port="$(cat listener.port)"
silent="postgresql://ci:Pw0rd@127.0.0.1:$port/fleet?connect_timeout=1"
rc hang_push "$attnprof" push --db src.db --to "$silent"
rc hang_pull "$attnprof" pull --db pulled.db --from "$silent"
# Without connect_timeout in the URL: the default's 10 s, not forever.
rc hang_default "$attnprof" pull --db pulled.db --from "postgresql://ci@127.0.0.1:$port/fleet"
kill "$listener"
[ "$hang_default" = 3 ] || { cat hang_default.log; fail "pull with the default timeout exited $hang_default"; }
expect hang_default.log "timeout expired (no answer within the connect timeout, 10 s; connect_timeout=N in the URL sets it)"
for v in push pull; do
  s="hang_$v"
  [ "${!s}" = 3 ] || { cat "$s.log"; fail "$v against a silent server exited ${!s}"; }
  expect "$s.log" "attnprof: postgresql://ci:***@127.0.0.1:$port/fleet?connect_timeout=1: cannot connect:"
  expect "$s.log" "timeout expired (no answer within the connect timeout, 1 s; connect_timeout=N in the URL sets it)"
  grep -q Pw0rd "$s.log" && fail "$v printed the password"
done

echo "== a statement that waits: the server's statement timeout; a server that stops: ours"
mkfifo lock.fifo
psql "$url" -X -q <lock.fifo >/dev/null 2>&1 &
lock_pid=$!
exec 3>lock.fifo
echo "BEGIN; LOCK TABLE attnprof_runs IN ACCESS EXCLUSIVE MODE;" >&3
waits() {  # waits APP: the pid of the backend of application APP waiting for a lock
  sql "SELECT pid FROM pg_stat_activity WHERE application_name = '$1' AND wait_event_type = 'Lock'"
}
synth --runs 1 --seed 77 --id-prefix 7117 --out late.jsonl
"$attnprof" import --db late.db late.jsonl >/dev/null
rc stmt "$attnprof" push --db late.db \
  --to "$url&application_name=attnprof-stmt&options=-c%20statement_timeout%3D1500"
[ "$stmt" = 3 ] || { cat stmt.log; fail "a push past its statement timeout exited $stmt"; }
expect stmt.log "canceling statement due to statement timeout"
"$attnprof" push --db late.db --to "$url&application_name=attnprof-stopped&connect_timeout=1&options=-c%20statement_timeout%3D1000" >stopped.log 2>&1 &
push_pid=$!
backend=""
for _ in $(seq 200); do backend="$(waits attnprof-stopped)"; [ -n "$backend" ] && break; sleep 0.05; done
[ -n "$backend" ] || fail "the push never waited for the lock"
kill -STOP "$backend"  # its own statement timeout cannot fire now: only the client's can
s=0; wait "$push_pid" || s=$?
kill -CONT "$backend"
echo "ROLLBACK;" >&3
exec 3>&-
wait "$lock_pid" || true
[ "$s" = 3 ] || { cat stopped.log; fail "a push to a stopped server exited $s"; }
expect stopped.log "no answer from the server within 2000 ms (its statement timeout, 1000 ms, and the connect timeout after it;"
[ "$(sql "SELECT count(*) FROM attnprof_runs WHERE id LIKE '7117%'")" = 0 ] || fail "a timed-out push stored its run"

echo "== passwords: never printed, whatever the form"
rc url_v6 "$attnprof" push --db src.db --to 'postgresql://ci:Pw0rd@[::1/fleet'
[ "$url_v6" = 2 ] || { cat url_v6.log; fail "an unparsable URL exited $url_v6"; }
expect url_v6.log 'postgresql://ci:***@[::1/fleet'
rc kv "$attnprof" push --db src.db --to "host=$tmp password=Pw0rd dbname=postgres"
[ "$kv" = 2 ] || { cat kv.log; fail "a keyword/value string exited $kv"; }
expect kv.log "host=$tmp password=*** dbname=postgres"
rc query_pw "$attnprof" pull --db x.db --from "postgresql://ci@127.0.0.1:1/fleet?password=Pw0rd&connect_timeout=1"
[ "$query_pw" = 3 ] || { cat query_pw.log; fail "a refused connection exited $query_pw"; }
expect query_pw.log "postgresql://ci@127.0.0.1:1/fleet?password=***&connect_timeout=1: cannot connect:"
for f in url_v6 kv query_pw; do grep -q Pw0rd "$f.log" && { cat "$f.log"; fail "$f printed the password"; }; done
echo "ok"
