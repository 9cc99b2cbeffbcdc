#!/usr/bin/env bash
# The attnprof gate as a CI job runs it (ci/github/action.yml calls this; so can any CI).
#
# Modes (ATTNPROF_MODE; "auto" picks from the GitHub event):
#   ab       pull requests: build the merge base next to the head (a git worktree, one shared
#            ccache) and judge the head against it with `attnprof ab`, both sides interleaved
#            on this machine. Needs no history and is not fooled by a noisy or different runner.
#   record   pushes to the main branch: import the durable history (history.sh), run the
#            suites, judge the run against main's history (`compare --baseline history`,
#            Perf-Accept trailers honoured), then append this run to the history branch.
#   run      anything else (other branches, manual runs): run and judge against the history
#            like record, but write nothing back.
#
# Inputs, all optional (the action maps its inputs onto these):
#   ATTNPROF_SUITES        scenario files, space-separated (default: the embedded smoke suite)
#   ATTNPROF_SHARD         i/n: run one shard of the suites
#   ATTNPROF_NAME          names this job's reports and history files (default from suites+shard)
#   ATTNPROF_RUN_ARGS      more arguments for `attnprof run` (e.g. --require-hardware)
#   ATTNPROF_WORKER_ARGS   arguments for both sides' workers in ab mode (e.g. --threads 1)
#   ATTNPROF_TOLERANCE     e.g. 5% (default: each case's own)
#   ATTNPROF_STRICT        true: inconclusive cases fail the gate too
#   ATTNPROF_MAIN_BRANCH   the branch whose pushes are recorded (default main)
#   ATTNPROF_BASE_REF      ab: what to compare against (default: the PR's base commit)
#   ATTNPROF_BASE_BUILD    ab: an existing build of the base (skips building the merge base)
#   ATTNPROF_HEAD_BUILD    an existing build of the head (skips ci/build.sh)
#   ATTNPROF_OUT           where reports go (default $RUNNER_TEMP/attnprof); this job's are in
#                          $ATTNPROF_OUT/<name>: gate.md, gate.json, gate.junit.xml, gate.html,
#                          attnprof.db, and in ab mode comment/ (body.md, pr) for the PR comment
#   ATTNPROF_HISTORY_BRANCH, ATTNPROF_HISTORY_REMOTE   see history.sh
# Exit code: the gate's (0 pass, 1 gate failed, 2 bad input, 3 environment: measure again).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git rev-parse --show-toplevel)"
cd "$root"

event="${GITHUB_EVENT_NAME:-}"
main_branch="${ATTNPROF_MAIN_BRANCH:-main}"
mode="${ATTNPROF_MODE:-auto}"
if [ "$mode" = auto ]; then
  case "$event" in
    pull_request | pull_request_target | merge_group) mode=ab ;;
    push) [ "${GITHUB_REF:-}" = "refs/heads/$main_branch" ] && mode=record || mode=run ;;
    *) mode=run ;;
  esac
fi
case "$mode" in ab | record | run) ;; *)
  echo "gate: ATTNPROF_MODE must be auto, ab, record or run, not \"$mode\"" >&2
  exit 2
  ;;
esac

read -r -a suites <<<"${ATTNPROF_SUITES:-}"
read -r -a run_args <<<"${ATTNPROF_RUN_ARGS:-}"
read -r -a worker_args <<<"${ATTNPROF_WORKER_ARGS:-}"
shard="${ATTNPROF_SHARD:-}"
if [ -n "$shard" ] && ! [[ "$shard" =~ ^[0-9]+/[0-9]+$ ]]; then
  echo "gate: ATTNPROF_SHARD must look like 2/4, not \"$shard\"" >&2
  exit 2
fi
name="${ATTNPROF_NAME:-}"
if [ -z "$name" ]; then
  name="$(basename -s .yaml "${suites[@]:-smoke}" | tr '\n' '-' | sed 's/-$//')"
  [ -n "$shard" ] && name+="-shard${shard%/*}of${shard#*/}"
fi
# The name ends up in file and branch paths: keep it to a safe alphabet.
name="$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_')"
out="${ATTNPROF_OUT:-${RUNNER_TEMP:-/tmp}/attnprof}/$name"
mkdir -p "$out"
db="$out/attnprof.db"
report_flags=(--markdown "$out/gate.md" --json "$out/gate.json")
tolerance_flags=()
[ -n "${ATTNPROF_TOLERANCE:-}" ] && tolerance_flags=(--tolerance "$ATTNPROF_TOLERANCE")
[ "${ATTNPROF_STRICT:-false}" = true ] && tolerance_flags+=(--strict)
shard_flags=()
[ -n "$shard" ] && shard_flags=(--shard "$shard")

output() { [ -n "${GITHUB_OUTPUT:-}" ] && echo "$1" >>"$GITHUB_OUTPUT" || true; }
output "report-dir=$out"
output "name=$name"
output "mode=$mode"
echo "gate: mode $mode, suites ${suites[*]:-smoke}${shard:+, shard $shard}, reports in $out"

build_tree() {  # build_tree SOURCE_TREE BUILD_DIR
  echo "::group::build $1"
  (cd "$1" && ATTNPROF_BUILD="$2" bash ci/build.sh)
  echo "::endgroup::"
}
head_build="${ATTNPROF_HEAD_BUILD:-$root/build}"
[ -n "${ATTNPROF_HEAD_BUILD:-}" ] || build_tree "$root" "$head_build"
attnprof="$head_build/attnprof"

finish() {  # finish RC: write the outputs, keep the gate's exit code
  output "exit-code=$1"
  echo "gate: exit $1"
  exit "$1"
}

if [ "$mode" = ab ]; then
  base_ref="${ATTNPROF_BASE_REF:-}"
  if [ -z "$base_ref" ] && [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ]; then
    base_ref="$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print((e.get("pull_request") or {}).get("base",{}).get("sha","") or (e.get("merge_group") or {}).get("base_sha",""))' "$GITHUB_EVENT_PATH")"
  fi
  [ -n "$base_ref" ] || base_ref="origin/$main_branch"
  base_build="${ATTNPROF_BASE_BUILD:-}"
  if [ -z "$base_build" ]; then
    # On a PR checkout HEAD is GitHub's merge commit; its merge base with the base branch's
    # commit is that commit itself. Needs the history (actions/checkout fetch-depth: 0).
    merge_base="$(git merge-base "$base_ref" HEAD)" || {
      echo "gate: no merge base of $base_ref and HEAD: check out with fetch-depth: 0" >&2
      finish 3
    }
    base_tree="${RUNNER_TEMP:-/tmp}/attnprof-base"
    git worktree remove --force "$base_tree" 2>/dev/null || rm -rf "$base_tree"
    git worktree add --detach "$base_tree" "$merge_base" >/dev/null
    base_build="$base_tree/build"
    build_tree "$base_tree" "$base_build"
  fi
  # (An attnprof without ab answers `ab --help` with its general help: look for ab's options.)
  ab_help="$("$attnprof" ab --help 2>&1 || true)"
  if ! grep -q -- '--base' <<<"$ab_help"; then
    echo "gate: this attnprof has no \`ab\` subcommand (needed for pull requests)" >&2
    finish 3
  fi
  # Reports and options this ab offers beyond the ones every version has.
  grep -q -- '--junit' <<<"$ab_help" && report_flags+=(--junit "$out/gate.junit.xml")
  grep -q -- '--html' <<<"$ab_help" && report_flags+=(--html "$out/gate.html")
  if [ -n "$shard" ]; then
    grep -q -- '--shard' <<<"$ab_help" || { echo "gate: this ab cannot shard" >&2; finish 2; }
  fi
  side_args=()
  for a in "${worker_args[@]}"; do side_args+=(--base-arg "$a" --head-arg "$a"); done
  rc=0
  "$attnprof" ab --base "$base_build" --head "$head_build" --db "$db" "${side_args[@]}" \
    "${shard_flags[@]}" "${tolerance_flags[@]}" "${report_flags[@]}" "${suites[@]}" || rc=$?
  # The comment a separate workflow_run job posts (fork PRs get no write token here).
  pr="$(python3 -c 'import json,sys; print((json.load(open(sys.argv[1])).get("pull_request") or {}).get("number",""))' "${GITHUB_EVENT_PATH:-/dev/null}" 2>/dev/null || true)"
  if [ -f "$out/gate.md" ]; then
    mkdir -p "$out/comment"
    cp "$out/gate.md" "$out/comment/$name.md"
    [ -n "$pr" ] && echo "$pr" >"$out/comment/pr"
  fi
  finish "$rc"
fi

# record and run: the durable history is the baseline.
ATTNPROF_BIN="$attnprof" bash "$here/history.sh" fetch "$db"
start="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
run_rc=0
"$attnprof" run --db "$db" "${shard_flags[@]}" "${run_args[@]}" "${suites[@]}" \
  | tee "$out/run.log" || run_rc=${PIPESTATUS[0]}
if [ "$run_rc" -ne 0 ] && [ "$run_rc" -ne 1 ]; then finish "$run_rc"; fi  # nothing stored
# The run this job stored ("run <id> stored in <db>"): what a record job appends to history.
run_id="$(sed -n 's/^run \([0-9a-f-]*\) stored in .*/\1/p' "$out/run.log" | tail -n 1)"
gate_rc=0
accept=()
[ "$mode" = record ] && accept=(--accept-from-commit-message)
"$attnprof" compare --db "$db" --baseline history --baseline-branch "$main_branch" \
  "${accept[@]}" "${tolerance_flags[@]}" "${report_flags[@]}" \
  --junit "$out/gate.junit.xml" --html "$out/gate.html" || gate_rc=$?
"$attnprof" report --db "$db" --html "$out/run.html" >/dev/null
if [ "$mode" = record ]; then
  # Only what this job added: its run, and annotations made since it started (the export
  # carries every annotation; the older ones are on the branch already).
  "$attnprof" export --db "$db" --since "$start" --branch "${GITHUB_REF_NAME:-$main_branch}" \
    -o "$out/export-all.jsonl"
  # --since has a second's resolution: runs imported from the branch that started in the same
  # second as this job would come along. Keep this job's run by its id.
  python3 - "$out/export-all.jsonl" "$out/history.jsonl" "$start" "$run_id" <<'PY'
import calendar, json, sys, time
src, dst, start, run_id = sys.argv[1:5]
since_ns = calendar.timegm(time.strptime(start, "%Y-%m-%dT%H:%M:%SZ")) * 10**9
with open(src) as f, open(dst, "w") as out:
    for n, line in enumerate(f):
        rec = json.loads(line)
        if n > 0 and "annotation" in rec and rec["annotation"].get("created_ns", 0) < since_ns:
            continue
        if n > 0 and "run" in rec and run_id and rec["run"].get("id") != run_id:
            continue
        out.write(line)
PY
  stamp="$(date -u +%Y%m%dT%H%M%SZ)"
  ATTNPROF_BIN="$attnprof" bash "$here/history.sh" push "$out/history.jsonl" \
    "history/$name/$stamp-${GITHUB_SHA:-$(git rev-parse HEAD)}-${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-1}.jsonl"
fi
# A correctness failure fails the job even when the timings pass.
[ "$gate_rc" -eq 0 ] && gate_rc="$run_rc"
finish "$gate_rc"
