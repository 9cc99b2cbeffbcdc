#!/usr/bin/env bash
# The CI scripts end to end, as the workflow runs them: ci/github/gate.sh in a checkout with
# GitHub's variables set (event, ref, sha, run id), $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT in
# temporary files, the durable history on a branch of a local bare "origin"; then
# ci/github/comment.sh against a recording stand-in for the gh CLI (no network here).
#   gate_scripts.sh BUILD_DIR       (BUILD_DIR holds the attnprof executable)
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: gate_scripts.sh BUILD_DIR}" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -q -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "$1 lacks \"$2\""; }; }

# The repository under test: one commit, pushed to a bare origin.
git init --quiet --bare "$tmp/origin.git"
git init --quiet -b main "$tmp/checkout"
cd "$tmp/checkout"
git config user.name test && git config user.email test@example.com
cp "$src/tests/ci/tiny.yaml" tiny.yaml
git add tiny.yaml && git commit --quiet -m "a kernel change"
git remote add origin "$tmp/origin.git"
git push --quiet origin main

# What GitHub sets for a push to main, with files for the summary and outputs.
export GITHUB_ACTIONS=true GITHUB_EVENT_NAME=push GITHUB_REF=refs/heads/main GITHUB_REF_NAME=main
export GITHUB_SHA="$(git rev-parse HEAD)" GITHUB_REPOSITORY=acme/kernels GITHUB_RUN_ATTEMPT=1
export GITHUB_SERVER_URL=https://github.example GITHUB_WORKSPACE="$tmp/checkout"
export RUNNER_TEMP="$tmp/runner" GITHUB_STEP_SUMMARY="$tmp/summary.md" GITHUB_OUTPUT="$tmp/output"
export ATTNPROF_HEAD_BUILD="$build" ATTNPROF_SUITES=tiny.yaml ATTNPROF_RUN_ARGS="--cost-rows 0"
# The slice of history each job imports is kept between jobs here (gate.sh, fetch_history).
export ATTNPROF_HISTORY_CACHE="$tmp/history-cache"
mkdir -p "$RUNNER_TEMP"
history_files() { git --git-dir="$tmp/origin.git" ls-tree -r --name-only attnprof-history 2>/dev/null | grep -c '\.jsonl$' || true; }

echo "== record: the first push to main starts the history branch"
export GITHUB_RUN_ID=101
: >"$GITHUB_OUTPUT"
bash "$src/ci/github/gate.sh" >"$tmp/record1.log" 2>&1 || { cat "$tmp/record1.log"; fail "record exited $?"; }
expect "$tmp/record1.log" "no branch attnprof-history on origin yet"
expect "$tmp/record1.log" "history: added history/tiny/"
expect "$GITHUB_OUTPUT" "mode=record"
expect "$GITHUB_OUTPUT" "exit-code=0"
expect "$GITHUB_STEP_SUMMARY" "## attnprof gate: passed"
expect "$GITHUB_STEP_SUMMARY" "2 new"  # nothing to compare against yet
out="$RUNNER_TEMP/attnprof/tiny"
for f in gate.md gate.json gate.junit.xml gate.html run.html history.jsonl; do
  [ -s "$out/$f" ] || fail "no $out/$f"
done
expect "$out/gate.junit.xml" '<testsuites name="attnprof" tests="2" failures="0"'
[ "$(history_files)" = 1 ] || fail "expected 1 history file, found $(history_files)"

echo "== record again: the history is imported, this run appended"
export GITHUB_RUN_ID=102
: >"$GITHUB_OUTPUT"
bash "$src/ci/github/gate.sh" >"$tmp/record2.log" 2>&1 || { cat "$tmp/record2.log"; fail "second record"; }
fp="$(sed -n 's/^env  *//p' <("$build/attnprof" show latest --db "$RUNNER_TEMP/attnprof/tiny/attnprof.db"))"
expect "$tmp/record2.log" "importing 1 export(s) from attnprof-history (environment $fp, of 1 there)"
# Each run's file lies in its environment's folder: the slice a job imports.
[ "$(git --git-dir="$tmp/origin.git" ls-tree -r --name-only attnprof-history | grep -c "^history/tiny/$fp/")" = 2 ] \
  || fail "the history files are not under history/tiny/$fp/"
[ "$(history_files)" = 2 ] || fail "expected 2 history files, found $(history_files)"
# Each file holds its own run only: two runs in all, not three.
runs="$(git --git-dir="$tmp/origin.git" archive attnprof-history | tar -xO | grep -c '^{"run"')"
[ "$runs" = 2 ] || fail "expected 2 runs on the history branch, found $runs"

echo "== attnprof report: a case's history, and a case that has none (bad input, exit 2)"
"$build/attnprof" report --db "$out/attnprof.db" --case tiny/prefill/b1-s32-fp32-none/eager \
  --html "$tmp/h.html" >"$tmp/report.log" || fail "report --case exited $?"
expect "$tmp/report.log" "history of tiny/prefill/b1-s32-fp32-none/eager (2 runs, 0 change points)"
rc=0
"$build/attnprof" report --db "$out/attnprof.db" --case no/such --html "$tmp/x.html" \
  >"$tmp/report2.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "report --case no/such exited $rc, not 2"
expect "$tmp/report2.log" 'no stored history for "no/such"'

echo "== a push to another branch: judged against the history, nothing written back"
export GITHUB_REF=refs/heads/feature GITHUB_REF_NAME=feature GITHUB_RUN_ID=103
: >"$GITHUB_OUTPUT"
bash "$src/ci/github/gate.sh" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail "run mode"; }
expect "$GITHUB_OUTPUT" "mode=run"
# The first record's file was imported by the second record job: only the second's is new.
expect "$tmp/run.log" "importing 1 export(s) from attnprof-history (environment $fp, of 2 there)"
[ "$(history_files)" = 2 ] || fail "a branch push wrote history"

echo "== bad input is exit 2 with the reason"
rc=0
ATTNPROF_SHARD=two bash "$src/ci/github/gate.sh" >"$tmp/bad.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "a bad shard exited $rc, not 2"
expect "$tmp/bad.log" 'ATTNPROF_SHARD must look like 2/4, not "two"'

echo "== ab on a pull request: the same build on both sides is refused, unless asked for"
cat >"$tmp/event.json" <<JSON
{"pull_request": {"number": 7, "base": {"sha": "$GITHUB_SHA"}}}
JSON
export GITHUB_EVENT_NAME=pull_request GITHUB_REF=refs/pull/7/merge GITHUB_EVENT_PATH="$tmp/event.json"
: >"$GITHUB_OUTPUT"
rc=0
ATTNPROF_BASE_BUILD="$build" bash "$src/ci/github/gate.sh" >"$tmp/aa.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$tmp/aa.log"; fail "an unasked A/A exited $rc, not 2"; }
expect "$tmp/aa.log" "gate: both sides are the same build"
# worker-args reach both sides: a plugin given there is the same plugin twice.
rc=0
ATTNPROF_BASE_BUILD="$build" ATTNPROF_WORKER_ARGS="--plugin=/x/libmine.so" \
  bash "$src/ci/github/gate.sh" >"$tmp/aa2.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$tmp/aa2.log"; fail "a plugin in worker-args exited $rc, not 2"; }
expect "$tmp/aa2.log" "Name your plugins in \`plugins\`"
: >"$GITHUB_OUTPUT"
rc=0
# An A/A with a tolerance of 1000%: a regression would need the head 11x slower than itself,
# which no load of a shared machine makes of a paired, interleaved measurement, so the gate
# passes (each case equivalent, or inconclusive where the load left too few rounds: both pass).
ATTNPROF_AA=true ATTNPROF_TOLERANCE=1000% ATTNPROF_BASE_BUILD="$build" \
  bash "$src/ci/github/gate.sh" >"$tmp/ab.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/ab.log"; fail "ab (A/A) exited $rc, not 0"; }
expect "$GITHUB_OUTPUT" "exit-code=0"
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["result"]["exit_code"] == 0 else 1)' \
  "$out/gate.json" || fail "gate.json's exit_code is not the gate's 0"
expect "$GITHUB_OUTPUT" "mode=ab"
[ "$(cat "$out/comment/pr")" = 7 ] || fail "no PR number for the comment"
[ -s "$out/comment/tiny.md" ] || fail "no comment body"
# Inputs that name what is not there end in 2 or 3 with the input named, never 127.
rc=0
ATTNPROF_PLUGINS=build/libnone.so bash "$src/ci/github/gate.sh" >"$tmp/np.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$tmp/np.log"; fail "plugins without a build-command exited $rc, not 2"; }
expect "$tmp/np.log" "no build-command"
rc=0
ATTNPROF_BASE_BUILD="$build" ATTNPROF_BUILD_COMMAND="exit 7" bash "$src/ci/github/gate.sh" \
  >"$tmp/bc.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$tmp/bc.log"; fail "a failing build-command exited $rc, not 2"; }
expect "$tmp/bc.log" "build-command failed in the head tree"
rc=0
ATTNPROF_BASE_BUILD="$build" ATTNPROF_BUILD_COMMAND="true" ATTNPROF_PLUGINS=build/libnone.so \
  bash "$src/ci/github/gate.sh" >"$tmp/nm.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$tmp/nm.log"; fail "a plugin the build did not make exited $rc, not 2"; }
expect "$tmp/nm.log" "plugins: build/libnone.so is not in the head tree"
rc=0
ATTNPROF_HEAD_BUILD="$tmp/nowhere" bash "$src/ci/github/gate.sh" >"$tmp/nb.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$tmp/nb.log"; fail "a missing head build exited $rc, not 2"; }
expect "$tmp/nb.log" "no attnprof in $tmp/nowhere"
unset GITHUB_EVENT_PATH

echo "== comment: posted once, then updated in place"
mkdir -p "$tmp/bin" "$tmp/artifacts/attnprof-comment-tiny"
echo 7 >"$tmp/artifacts/attnprof-comment-tiny/pr"
cp "$out/gate.md" "$tmp/artifacts/attnprof-comment-tiny/tiny.md"
# A stand-in for gh: records each call; the comment list is what $GH_COMMENTS holds.
cat >"$tmp/bin/gh" <<'GH'
#!/usr/bin/env bash
echo "gh $*" >>"$GH_LOG"
for a in "$@"; do case "$a" in body=@*) cp "${a#body=@}" "$GH_LOG.body" ;; esac; done
[ "$2" = "--paginate" ] && cat "$GH_COMMENTS"
exit 0
GH
chmod +x "$tmp/bin/gh"
export GH_LOG="$tmp/gh.log" GH_COMMENTS="$tmp/comments.json" ATTNPROF_RUN_URL=https://ci.example/run/1
echo '[{"id": 5, "user": {"login": "someone"}, "body": "<!-- attnprof-gate --> not ours"}]' >"$GH_COMMENTS"
PATH="$tmp/bin:$PATH" bash "$src/ci/github/comment.sh" "$tmp/artifacts" >"$tmp/c1.log"
expect "$tmp/c1.log" "comment: posted a comment on #7"
expect "$GH_LOG" "gh api -X POST repos/acme/kernels/issues/7/comments"
head -n 1 "$GH_LOG.body" | grep -qx '<!-- attnprof-gate -->' || fail "the body does not start with the marker"
expect "$GH_LOG.body" "## attnprof gate: passed"
expect "$GH_LOG.body" "(https://ci.example/run/1)"
echo '[{"id": 5, "user": {"login": "someone"}, "body": "hi"}][{"id": 9, "user": {"login": "github-actions[bot]"}, "body": "<!-- attnprof-gate -->\nold"}]' >"$GH_COMMENTS"
PATH="$tmp/bin:$PATH" bash "$src/ci/github/comment.sh" "$tmp/artifacts" >"$tmp/c2.log"
expect "$tmp/c2.log" "comment: updated comment 9 on #7"
expect "$GH_LOG" "gh api -X PATCH repos/acme/kernels/issues/comments/9"
echo "x; rm -rf /" >"$tmp/artifacts/attnprof-comment-tiny/pr"
rc=0
PATH="$tmp/bin:$PATH" bash "$src/ci/github/comment.sh" "$tmp/artifacts" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "a PR number that is not digits was accepted (exit $rc)"

echo "gate scripts: every check held"
