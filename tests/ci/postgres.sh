#!/usr/bin/env bash
# attnprof push and pull against a real PostgreSQL server of this test's own: a temporary
# cluster (Debian's postgresql binaries) in a temporary folder, listening only on a Unix socket
# there, run as an unprivileged user (initdb refuses root). Then: a round trip equal to its
# source, a slice, 8 concurrent writers with nothing lost, a push killed mid-transaction
# (kill -9) leaving no partial run, a conflicting run named with exit 2, bad URLs.
#   postgres.sh BUILD_DIR       (BUILD_DIR holds the attnprof executable)
# ATTNPROF_PG_WRITER_RUNS (default 25): each concurrent writer's own runs; the test prints how
# many runs the writers stored and read back, and how long their pushes took.
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: postgres.sh BUILD_DIR}" && pwd)"
attnprof="$build/attnprof"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "$1 lacks \"$2\""; }; }
# shellcheck source=tests/ci/pg_cluster.sh
source "$src/tests/ci/pg_cluster.sh"
mkdir "$tmp/w" && cd "$tmp/w"

echo "== a source history: a real run as the template, synthetic runs from it"
"$attnprof" run --db template.db "$src/tests/ci/tiny.yaml" --cost-rows 0 >run.log 2>&1 \
  || { cat run.log; fail "run"; }
"$attnprof" compare --db template.db --baseline history >/dev/null 2>&1 || true  # verdicts
"$attnprof" export --db template.db -o template.jsonl 2>/dev/null
grep -q '"verdicts"' template.jsonl || fail "the template run has no verdicts"
synth() { python3 "$src/bench/synth_history.py" template.jsonl "$@"; }
synth --runs 24 --seed 1 --envs 2 --other-branch 4 --pairs 2 --annotations 3 --out src.jsonl
"$attnprof" import --db src.db src.jsonl >/dev/null

echo "== push, then pull into an empty history: the same history"
"$attnprof" push --db src.db --to "$url" >push1.log
expect push1.log "$url: 28 runs pushed, 0 already there, 0 conflicting, 3 annotations, 2 A/B pairs' rounds"
"$attnprof" pull --from "$url" --db copy.db >pull1.log
expect pull1.log "$url: 28 runs pulled, 0 already here, 3 annotations, 2 A/B pairs' rounds"
"$attnprof" export --db src.db -o src.export 2>/dev/null
"$attnprof" export --db copy.db -o copy.export 2>/dev/null
# Line by line, in any order: an A/B pair's two runs start in the same nanosecond here, and
# which of them an export lists first is the order they were stored in.
cmp -s <(sort src.export) <(sort copy.export) || fail "the pulled history differs from its source"
"$attnprof" pull --from "$url" --db copy.db >pull2.log
expect pull2.log "$url: 0 runs pulled, 28 already here"
"$attnprof" push --db copy.db --to "$url" >push2.log
expect push2.log "$url: 0 runs pushed, 28 already there, 0 conflicting, 0 annotations"

echo "== a slice: main, one environment, the newest 5"
fp="$("$attnprof" history --db src.db --branch main --format json 2>/dev/null | python3 -c \
  'import json,sys; print(sorted({r["env"] for r in json.load(sys.stdin)})[0])')"
"$attnprof" pull --from "$url" --db slice.db --branch main --env "${fp:0:8}" --last 5 >slice.log
expect slice.log "$url: 5 runs pulled, 0 already here"
got="$("$attnprof" history --db slice.db --format json 2>/dev/null | python3 -c \
  'import json,sys; rows=json.load(sys.stdin); print(len({r["run"] for r in rows}), sorted({r["env"] for r in rows}), sorted({r["branch"] for r in rows}))')"
[ "$got" = "5 ['$fp'] ['main']" ] || fail "slice holds $got"

per="${ATTNPROF_PG_WRITER_RUNS:-25}"
total=$((8 * per + 10))
echo "== 8 concurrent writers: $per distinct runs each, and 10 runs they all push"
synth --runs 10 --seed 99 --id-prefix 5a4ed --out shared.jsonl
for w in 1 2 3 4 5 6 7 8; do
  synth --runs "$per" --seed "$((100 + w))" --out "w$w.jsonl"
  "$attnprof" import --db "w$w.db" "w$w.jsonl" shared.jsonl >/dev/null
done
before="$(sql 'SELECT count(*) FROM attnprof_runs')"
t0="$(date +%s.%N)"
pids=()
for w in 1 2 3 4 5 6 7 8; do
  "$attnprof" push --db "w$w.db" --to "$url" >"push-w$w.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a concurrent push exited $?"; done
t1="$(date +%s.%N)"
after="$(sql 'SELECT count(*) FROM attnprof_runs')"
[ "$((after - before))" = "$total" ] || fail "8 writers added $((after - before)) runs, not $total"
pushed="$(cat push-w*.log | sed -n 's/.*: \([0-9]*\) runs pushed, \([0-9]*\) already there.*/\1 \2/p' \
  | awk '{p += $1; a += $2} END {print p, a}')"
[ "$pushed" = "$total 70" ] || fail "the writers report $pushed (pushed, already there), not $total 70"
"$attnprof" import --db union.db w*.jsonl shared.jsonl >/dev/null
"$attnprof" pull --from "$url" --db fleet.db --branch main >/dev/null
"$attnprof" export --db union.db -o union.all 2>/dev/null
"$attnprof" export --db fleet.db -o fleet.all 2>/dev/null
python3 - union.all fleet.all <<'PY' || fail "a run the writers pushed is missing or changed on the server"
import json, sys
def runs(path):
    return {json.loads(l)["run"]["id"]: l for l in open(path) if l.startswith('{"run"')}
union, fleet = runs(sys.argv[1]), runs(sys.argv[2])
missing = [i for i in union if fleet.get(i) != union[i]]
print(f"{len(union) - len(missing)} of the {len(union)} runs read back equal", end="")
sys.exit(1 if missing else 0)
PY
echo "; the writers stored $((after - before)) (reported: ${pushed% *} pushed, ${pushed#* } already there) in" \
  "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, load $(cut -d' ' -f1 /proc/loadavg)"

echo "== a push killed mid-transaction (kill -9) leaves no partial run"
synth --runs 3 --seed 7 --id-prefix dead0 --out killed.jsonl
"$attnprof" import --db killed.db killed.jsonl >/dev/null
mkfifo lock.fifo
psql "$url" -X -q <lock.fifo >/dev/null 2>&1 &
lock_pid=$!
exec 3>lock.fifo
echo "BEGIN; LOCK TABLE attnprof_verdicts IN ACCESS EXCLUSIVE MODE;" >&3
for _ in $(seq 100); do
  [ "$(sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
            WHERE c.relname = 'attnprof_verdicts' AND l.mode = 'AccessExclusiveLock' AND l.granted")" = 1 ] && break
  sleep 0.1
done
runs_before="$(sql 'SELECT count(*) FROM attnprof_runs')"
"$attnprof" push --db killed.db --to "$url&application_name=attnprof-killed" >killed.log 2>&1 &
push_pid=$!
# Its first run's row is written and its verdicts wait for the lock: inside the transaction.
for _ in $(seq 100); do
  [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'attnprof-killed'
            AND wait_event_type = 'Lock'")" = 1 ] && break
  sleep 0.1
done
[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'attnprof-killed'
          AND wait_event_type = 'Lock'")" = 1 ] || fail "the push never waited inside its transaction"
kill -9 "$push_pid"
wait "$push_pid" 2>/dev/null || true
echo "ROLLBACK;" >&3
exec 3>&-
wait "$lock_pid" || true
for _ in $(seq 100); do
  [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'attnprof-killed'")" = 0 ] && break
  sleep 0.1
done
[ "$(sql 'SELECT count(*) FROM attnprof_runs')" = "$runs_before" ] || fail "the killed push left a run"
[ "$(sql "SELECT count(*) FROM attnprof_runs WHERE id LIKE 'dead0%'")" = 0 ] || fail "a killed run is stored"
"$attnprof" push --db killed.db --to "$url" >killed2.log
expect killed2.log "$url: 3 runs pushed, 0 already there"
# Every run on the server has every verdict it was pushed with.
[ "$(sql "SELECT count(*) FROM attnprof_runs r WHERE NOT EXISTS
          (SELECT 1 FROM attnprof_verdicts v WHERE v.run_id = r.id)")" = 0 ] || fail "a run without its verdicts"

echo "== a run id already there with other content: named, exit 2, the server unchanged"
victim="$(sed -n '2p' src.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["id"])')"
python3 - "$victim" src.jsonl >conflict.jsonl <<'PY'
import json, sys
for n, line in enumerate(open(sys.argv[2])):
    rec = json.loads(line)
    if n == 0 or rec.get("run", {}).get("id") == sys.argv[1]:
        if n:
            rec["run"]["git_commit"] = "c0ffee" + rec["run"]["git_commit"][6:]
        print(json.dumps(rec))
PY
"$attnprof" import --db conflict.db conflict.jsonl >/dev/null
theirs="$(sql "SELECT md5(record) FROM attnprof_runs WHERE id = '$victim'")"
rc=0
"$attnprof" push --db conflict.db --to "$url" >conflict.log 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat conflict.log; fail "a conflicting push exited $rc, not 2"; }
commit="$(sed -n '2p' src.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["git_commit"])')"
expect conflict.log "$url: 0 runs pushed, 0 already there, 1 conflicting"
expect conflict.log "$url: run $victim is on the server with other content (git_commit: \"c0ffee${commit:6}\" here, \"$commit\" on the server): left as it is there, and not pushed"
[ "$(sql "SELECT md5(record) FROM attnprof_runs WHERE id = '$victim'")" = "$theirs" ] || fail "the conflict changed the server"

echo "== the record job with a server: pulls its slice, pushes its run, writes no branch"
git init --quiet --bare "$tmp/origin.git"
git init --quiet -b main "$tmp/checkout"
cp "$src/tests/ci/tiny.yaml" "$tmp/checkout/tiny.yaml"
git -C "$tmp/checkout" add tiny.yaml
git -C "$tmp/checkout" -c user.name=t -c user.email=t@example.com commit --quiet -m "a change"
git -C "$tmp/checkout" remote add origin "$tmp/origin.git"
record() {  # record JOB: gate.sh as a push to main's record job, with the server's URL
  (cd "$tmp/checkout" && GITHUB_ACTIONS=true GITHUB_EVENT_NAME=push GITHUB_REF=refs/heads/main \
    GITHUB_REF_NAME=main GITHUB_SHA="$(git rev-parse HEAD)" GITHUB_RUN_ID="$1" \
    RUNNER_TEMP="$tmp/runner$1" GITHUB_OUTPUT="$tmp/output$1" GITHUB_STEP_SUMMARY="$tmp/summary$1" \
    ATTNPROF_HEAD_BUILD="$build" ATTNPROF_SUITES=tiny.yaml ATTNPROF_RUN_ARGS="--cost-rows 0" \
    ATTNPROF_HISTORY_CACHE="$tmp/cache" ATTNPROF_POSTGRES_URL="$url" \
    bash "$src/ci/github/gate.sh") >"record$1.log" 2>&1 || { cat "record$1.log"; fail "record job $1"; }
}
sql "DELETE FROM attnprof_runs" >/dev/null
record 1
expect record1.log "$url: 0 runs pulled, 0 already here"
expect record1.log "$url: 1 runs pushed, 0 already there, 0 conflicting"
record 2
expect record2.log "$url: 1 runs pulled, 0 already here"
expect record2.log "$url: 1 runs pushed, 0 already there, 0 conflicting"
[ "$(sql 'SELECT count(*) FROM attnprof_runs')" = 2 ] || fail "the record jobs stored $(sql 'SELECT count(*) FROM attnprof_runs') runs"
git --git-dir="$tmp/origin.git" rev-parse --verify -q refs/heads/attnprof-history >/dev/null \
  && fail "a record job with a server wrote the history branch"

echo "== bad input is exit 2, an unreachable server exit 3"
rc=0; "$attnprof" push --db src.db --to http://example.com/x >bad.log 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "a non-PostgreSQL URL exited $rc"
expect bad.log '--to: "http://example.com/x" is not a PostgreSQL URL (postgresql://[user@]host[:port]/dbname)'
rc=0; ATTNPROF_POSTGRES_URL= "$attnprof" pull --db x.db >bad2.log 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "pull without a server exited $rc"
expect bad2.log "--from: no server named: give its postgresql:// URL or set \$ATTNPROF_POSTGRES_URL"
rc=0; "$attnprof" pull --from "postgresql://u:secret@/postgres?host=$tmp/nowhere" --db x.db >bad3.log 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "an unreachable server exited $rc"
expect bad3.log "attnprof: postgresql://u:***@/postgres?host=$tmp/nowhere: cannot connect:"
grep -q secret bad3.log && fail "the password was printed"
rc=0; "$attnprof" history --db "$url" >bad4.log 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "history --db URL exited $rc"
expect bad4.log "a PostgreSQL server is not a history file: take a slice of it with \`attnprof pull --from URL --db FILE\`"
echo "ok"
