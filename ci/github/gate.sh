#!/usr/bin/env bash
# The attnprof gate as a CI job runs it (ci/github/action.yml calls this; so can any CI), in the
# checkout of the repository under test: attnprof itself, or a repository of the user's own
# (kernels as LibTorch plugins, attention as AOTInductor packages) that names how to build them.
#
# Modes (ATTNPROF_MODE; "auto" picks from the GitHub event):
#   ab       pull requests: check out the merge base in a git worktree next to the head, build
#            both sides, and judge the head against the base with `attnprof ab`, both sides
#            interleaved on this machine. Needs no history and is not fooled by a noisy runner.
#   record   pushes to the main branch: run the suites, import the slice of the durable
#            history that the run's comparison needs (history.sh, or the fleet's PostgreSQL
#            server), judge the run against main's history (`compare --baseline history`,
#            Perf-Accept trailers honoured), then append this run to the history branch (or
#            push it to the server).
#   run      anything else (other branches, manual runs): run and judge against the history
#            like record, but write nothing back.
#
# What a side is. attnprof is always built from this script's own tree (the action's files at
# the action's ref), never from the checkout. Then:
#   - in attnprof's own repository (a checkout with ci/build.sh and harness/, and no
#     build command), each side is that tree's own attnprof build, as before;
#   - elsewhere, ATTNPROF_BUILD_COMMAND builds the user's code in each tree (the head checkout
#     and the merge base's worktree) against the LibTorch the worker links, and each side's
#     worker loads its own tree's ATTNPROF_PLUGINS and compiled packages.
#
# Inputs, all optional (the action maps its inputs onto these):
#   ATTNPROF_SUITES        scenario files, space-separated, relative to the repository root
#                          (default: the embedded smoke suite); the head's files define the cases
#   ATTNPROF_SHARD         i/n: run one shard of the suites
#   ATTNPROF_NAME          names this job's reports and history files (default from suites+shard)
#   ATTNPROF_BUILD_COMMAND a shell command that builds the user's code, run in each tree with
#                          LibTorch on CMAKE_PREFIX_PATH (and Torch_DIR), the CUDA toolkit's
#                          variables, and that torch's Python first on PATH
#   ATTNPROF_PLUGINS       plugin paths, space-separated, relative to each tree
#   ATTNPROF_PACKAGES_COMMAND  a command that makes AOTInductor packages in each tree; the base
#                          side runs the base tree's package wherever a case names the head's
#   ATTNPROF_BASE_TORCH, ATTNPROF_HEAD_TORCH  pip specifiers (torch==2.10.0): each side's
#                          attnprof and user code built against its own torch (an upgrade gate)
#   ATTNPROF_AA            true: both sides may be the same build (an A/A on purpose)
#   ATTNPROF_MEASURE_IDENTICAL  true: measure even when both trees built identical code
#   ATTNPROF_RUN_ARGS      more arguments for `attnprof run` (e.g. --require-hardware)
#   ATTNPROF_WORKER_ARGS   arguments for both sides' workers in ab mode (e.g. --threads 1)
#   ATTNPROF_TOLERANCE     e.g. 5% (default: each case's own)
#   ATTNPROF_STRICT        true: inconclusive cases fail the gate too
#   ATTNPROF_MAIN_BRANCH   the branch whose pushes are recorded (default main)
#   ATTNPROF_BASE_REF      ab: what to compare against (default: the PR's base commit)
#   ATTNPROF_BASE_BUILD    ab: an existing attnprof build for the base side (skips its build)
#   ATTNPROF_HEAD_BUILD    an existing attnprof build for the head side (skips its build)
#   ATTNPROF_OUT           where reports go (default $RUNNER_TEMP/attnprof); this job's are in
#                          $ATTNPROF_OUT/<name>: gate.md, gate.json, gate.junit.xml, gate.html,
#                          attnprof.db, and in ab mode comment/ (<name>.md, pr) for the PR comment
#   ATTNPROF_HISTORY_BRANCH, ATTNPROF_HISTORY_REMOTE   see history.sh
#   ATTNPROF_HISTORY_WINDOW  how many of main's newest runs in this environment to import
#                          (default 200)
#   ATTNPROF_HISTORY_CACHE where the imported slice is kept between jobs (default
#                          $ATTNPROF_HOME/history, inside the action's cache)
#   ATTNPROF_POSTGRES_URL  the fleet's server (docs/fleet.md): the slice is pulled from it, and
#                          a record job pushes its run there instead of to the history branch
# Exit code: the gate's (0 pass, 1 gate failed, 2 bad input, 3 environment: measure again).
# Nothing else: a command that fails in an unforeseen way ends in 3, naming the command.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
attnprof_src="$(cd "$here/../.." && pwd)"
# A command that fails where nothing tests it (set -e ends the script) is the environment's
# failure, exit 3, named: never its own status (127 for a missing command, 1 that would read
# as a regression).
trap 'failed="$BASH_COMMAND (line $LINENO)"' ERR
trap 'rc=$?; if [ -n "${failed:-}" ] || [ "$rc" -gt 3 ]; then
  echo "gate: unexpected failure (exit $rc) in: ${failed:-?}" >&2; exit 3; fi' EXIT
root="$(git rev-parse --show-toplevel 2>/dev/null)" || {
  echo "gate: $(pwd) is not a git checkout: run the gate in the repository under test" \
       "(actions/checkout with fetch-depth: 0)" >&2
  exit 2
}
cd "$root"
# shellcheck source=ci/env.sh
source "$attnprof_src/ci/env.sh"
# shellcheck source=ci/github/sides.sh
source "$here/sides.sh"

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

finish() {  # finish RC: write the outputs, keep the gate's exit code
  output "exit-code=$1"
  echo "gate: exit $1"
  exit "$1"
}

# attnprof's own repository (or a fork): each side builds its own tree with its ci/build.sh.
own_repo=false
if [ -z "${ATTNPROF_BUILD_COMMAND:-}${ATTNPROF_PLUGINS:-}${ATTNPROF_PACKAGES_COMMAND:-}" ] &&
   [ -f "$root/ci/build.sh" ] && [ -f "$root/harness/CMakeLists.txt" ]; then
  own_repo=true
fi
if [ "$own_repo" = false ] && [ -n "${ATTNPROF_PLUGINS:-}${ATTNPROF_PACKAGES_COMMAND:-}" ] &&
   [ -z "${ATTNPROF_BUILD_COMMAND:-}" ]; then
  echo "gate: plugins or packages-command are given but no build-command: name the command" \
       "that builds them (e.g. cmake -S . -B build && cmake --build build)" >&2
  finish 2
fi
# build_side SIDE TREE BUILD_DIR TORCH_SPEC: the attnprof a side runs, in BUILD_DIR.
build_side() {
  local rc=0
  if [ "$own_repo" = true ]; then
    echo "::group::build $2"
    (cd "$2" && ATTNPROF_BUILD="$3" bash ci/build.sh) || rc=$?
    echo "::endgroup::"
    [ "$rc" -eq 0 ] || { echo "gate: the $1 tree ($2) does not build (ci/build.sh)" >&2; finish 3; }
  else
    attnprof_tool_build "$1" "$4" "$3" || finish $?
  fi
}
# attnprof's builds live in its own tree (the action's files), one per torch: build/ for the
# default torch, so that ccache hits what an earlier job of this action compiled.
tool_build_dir() {  # tool_build_dir TORCH_SPEC
  if [ -z "$1" ]; then printf '%s/build\n' "$attnprof_src"; else
    printf '%s/build-%s\n' "$attnprof_src" "$(printf '%s' "$1" | tr -c 'A-Za-z0-9._-' _)"; fi
}
head_torch="${ATTNPROF_HEAD_TORCH:-}"
base_torch="${ATTNPROF_BASE_TORCH:-}"
if [ -n "${ATTNPROF_HEAD_BUILD:-}" ]; then
  head_build="$ATTNPROF_HEAD_BUILD"
elif [ "$own_repo" = true ]; then
  head_build="$root/build"
  build_side head "$root" "$head_build" ""
else
  head_build="$(tool_build_dir "$head_torch")"
  build_side head "$root" "$head_build" "$head_torch"
fi
attnprof="$head_build/attnprof"
[ -x "$attnprof" ] || { echo "gate: no attnprof in $head_build (ATTNPROF_HEAD_BUILD)" >&2; finish 2; }
if [ "$own_repo" = false ] && [ -n "${ATTNPROF_BUILD_COMMAND:-}" ]; then
  user_build head "$root" "$attnprof" || finish $?
fi

if [ "$mode" = ab ]; then
  base_ref="${ATTNPROF_BASE_REF:-}"
  if [ -z "$base_ref" ] && [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ]; then
    base_ref="$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print((e.get("pull_request") or {}).get("base",{}).get("sha","") or (e.get("merge_group") or {}).get("base_sha",""))' "$GITHUB_EVENT_PATH")"
  fi
  [ -n "$base_ref" ] || base_ref="origin/$main_branch"
  # On a PR checkout HEAD is GitHub's merge commit; its merge base with the base branch's
  # commit is that commit itself. Needs the history (actions/checkout fetch-depth: 0).
  merge_base="$(git merge-base "$base_ref" HEAD 2>/dev/null)" || {
    echo "gate: no merge base of $base_ref and HEAD: check out with fetch-depth: 0," \
         "or name the base with ATTNPROF_BASE_REF" >&2
    finish 3
  }
  head_commit="$(git rev-parse HEAD)"
  base_tree=""
  # A user's repository always gets its base tree: its Python modules (py: kernels) are read
  # from there even where nothing is built.
  if { [ "$own_repo" = true ] && [ -z "${ATTNPROF_BASE_BUILD:-}" ]; } ||
     [ -n "${ATTNPROF_BUILD_COMMAND:-}" ] || [ "$own_repo" = false ]; then
    base_tree="${RUNNER_TEMP:-/tmp}/attnprof-base"
    git worktree remove --force "$base_tree" 2>/dev/null || rm -rf "$base_tree"
    git worktree prune
    git worktree add --detach "$base_tree" "$merge_base" >/dev/null
  fi
  if [ -n "${ATTNPROF_BASE_BUILD:-}" ]; then
    base_build="$ATTNPROF_BASE_BUILD"
  elif [ "$own_repo" = true ]; then
    base_build="$base_tree/build"
    build_side base "$base_tree" "$base_build" ""
  elif [ "$base_torch" != "$head_torch" ]; then
    base_build="$(tool_build_dir "$base_torch")"
    build_side base "$base_tree" "$base_build" "$base_torch"
  else
    base_build="$head_build"  # one attnprof serves both sides; the user's code differs
  fi
  [ -n "$base_tree" ] && [ -n "${ATTNPROF_BUILD_COMMAND:-}" ] && [ "$own_repo" = false ] &&
    { user_build base "$base_tree" "$base_build/attnprof" || finish $?; }

  # Each side's worker arguments: the shared ones, then its own tree's plugins and packages.
  base_args=("${worker_args[@]}") head_args=("${worker_args[@]}")
  base_files=() head_files=()
  if [ "$own_repo" = false ] && [ -n "$base_tree" ]; then
    mapfile -t hp < <(side_plugins head "$root") && [ "${#hp[@]}" -eq "$(wc -w <<<"${ATTNPROF_PLUGINS:-}")" ] || finish 2
    mapfile -t bp < <(side_plugins base "$base_tree") && [ "${#bp[@]}" -eq "${#hp[@]}" ] || finish 2
    head_args+=("${hp[@]}") base_args+=("${bp[@]}")
    for f in "${hp[@]}"; do head_files+=("${f#--plugin=}"); done
    for f in "${bp[@]}"; do base_files+=("${f#--plugin=}"); done
    if [ -n "${ATTNPROF_PACKAGES_COMMAND:-}" ]; then
      "$attnprof" list --json "${suites[@]}" >"$out/cases.json" || finish 2
      mapfile -t subs < <(tree_substitutes aoti "$out/cases.json" "$root" "$base_tree")
      base_args+=("${subs[@]}")
      for sub in "${subs[@]}"; do
        kernel="${sub#--substitute=}"; kernel="${kernel%%=aoti:*}"
        base_file="${sub##*=aoti:}"
        head_file="$root/${base_file#"$base_tree"/}"
        [ -f "$base_file" ] || { echo "gate: packages-command made no ${base_file#"$base_tree"/} in the base tree ($base_tree), which $kernel names" >&2; finish 2; }
        [ -f "$head_file" ] || { echo "gate: packages-command made no ${head_file#"$root"/} in the head tree, which $kernel names" >&2; finish 2; }
        head_files+=("$head_file") base_files+=("$base_file")
      done
    fi
    # The suites' Python modules in the head tree: the base side calls the base tree's copy.
    pysubs=()
    if [ "${#suites[@]}" -gt 0 ] && grep -qs 'py:' "${suites[@]}"; then
      "$attnprof" list --json "${suites[@]}" >"$out/cases.json" || finish 2
      mapfile -t pysubs < <(tree_substitutes py "$out/cases.json" "$root" "$base_tree")
    fi
    base_args+=("${pysubs[@]}")
    for sub in "${pysubs[@]}"; do
      base_file="${sub##*=py:}"; base_file="${base_file%:*}"
      head_file="$root/${base_file#"$base_tree"/}"
      [ -f "$base_file" ] || { echo "gate: the base tree ($base_tree) has no ${base_file#"$base_tree"/}, which ${sub%%=py:*} names" >&2; finish 2; }
      head_files+=("$head_file") base_files+=("$base_file")
    done
  elif [ "$own_repo" = true ]; then
    head_files=("$head_build/attnprof-worker") base_files=("$base_build/attnprof-worker")
  fi

  # Never the head against itself by mistake: the same worker with the same arguments is an
  # A/A, which passes whatever the change did (a plugin given in worker-args reaches both sides).
  if [ "$(readlink -f "$base_build/attnprof-worker")" = "$(readlink -f "$head_build/attnprof-worker")" ] &&
     [ "${base_args[*]}" = "${head_args[*]}" ] && [ "${ATTNPROF_AA:-false}" != true ]; then
    echo "gate: both sides are the same build (the same worker and arguments): this would judge" \
         "the head against itself. Name your plugins in \`plugins\` (with a build-command), so each" \
         "side loads its own tree's, not in worker-args; or set aa: true for an A/A on purpose" >&2
    finish 2
  fi
  # Base and head built the same bytes (a change to comments or docs): nothing to measure.
  if [ "${#head_files[@]}" -gt 0 ] && [ "${ATTNPROF_MEASURE_IDENTICAL:-false}" != true ]; then
    identical=true
    for i in "${!head_files[@]}"; do
      same_code "${base_files[$i]}" "${head_files[$i]}" || { identical=false; break; }
    done
    if [ "$identical" = true ]; then
      msg="base and head built identical code (${#head_files[@]} file(s) compared: $(for f in "${head_files[@]}"; do printf '%s ' "${f#"$root"/}"; done| sed 's/ $//')); nothing measured"
      echo "gate: $msg"
      { echo "## attnprof gate: passed"; echo
        echo "Base ${merge_base:0:12} and head ${head_commit:0:12}: $msg."; } >"$out/gate.md"
      [ -n "${GITHUB_STEP_SUMMARY:-}" ] && cat "$out/gate.md" >>"$GITHUB_STEP_SUMMARY"
      finish 0
    fi
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
  grep -q -- '--base-commit' <<<"$ab_help" && report_flags+=(--base-commit "$merge_base")
  if [ -n "$shard" ]; then
    grep -q -- '--shard' <<<"$ab_help" || { echo "gate: this ab cannot shard" >&2; finish 2; }
  fi
  side_args=()
  for a in "${base_args[@]}"; do side_args+=("--base-arg=$a"); done
  for a in "${head_args[@]}"; do side_args+=("--head-arg=$a"); done
  rc=0
  "$attnprof" ab --base "$base_build" --head "$head_build" --db "$db" "${side_args[@]}" \
    "${shard_flags[@]}" "${tolerance_flags[@]}" "${report_flags[@]}" "${suites[@]}" || rc=$?
  # ab's own word on it (ab.same_build in its JSON report), for sides this script did not see
  # as one: the same worker reached through another path, say.
  if [ "${ATTNPROF_AA:-false}" != true ] && [ -f "$out/gate.json" ] &&
     python3 -c 'import json,sys; sys.exit(0 if (json.load(open(sys.argv[1])).get("ab") or {}).get("same_build") is True else 1)' "$out/gate.json"; then
    echo "gate: attnprof ab says both sides are the same build (A/A: both sides are the same" \
         "build): this judged the head against itself; set aa: true if that is what you want" >&2
    rc=2
  fi
  # The comment a separate workflow_run job posts (fork PRs get no write token here).
  pr="$(python3 -c 'import json,sys; print((json.load(open(sys.argv[1])).get("pull_request") or {}).get("number",""))' "${GITHUB_EVENT_PATH:-/dev/null}" 2>/dev/null || true)"
  if [ -f "$out/gate.md" ]; then
    mkdir -p "$out/comment"
    cp "$out/gate.md" "$out/comment/$name.md"
    [ -n "$pr" ] && echo "$pr" >"$out/comment/pr"
  fi
  [ -n "$base_tree" ] && git worktree remove --force "$base_tree" 2>/dev/null || true
  finish "$rc"
fi

# The slice of main's history this run's comparison needs (main, environment FP, the newest
# $ATTNPROF_HISTORY_WINDOW runs), from the server when there is one, else from the history
# branch. It is kept between jobs in a history of its own ($ATTNPROF_HISTORY_CACHE, default
# under ~/.cache/attnprof, which the action caches), one per repository, branch and
# environment, so a job imports only what is new since the last; pruned to the window, then
# merged into this job's database.
fetch_history() {
  local fp="$1" window="${ATTNPROF_HISTORY_WINDOW:-200}" cache_dir key cache
  cache_dir="${ATTNPROF_HISTORY_CACHE:-$ATTNPROF_HOME/history}"
  key="$(printf '%s\n' "$(git remote get-url "${ATTNPROF_HISTORY_REMOTE:-origin}" 2>/dev/null || pwd)" \
    "${ATTNPROF_POSTGRES_URL:+server}" "${ATTNPROF_HISTORY_BRANCH:-attnprof-history}" \
    "$main_branch" "$fp" | sha256sum | cut -c1-16)"
  mkdir -p "$cache_dir"
  cache="$cache_dir/$key.db"
  if [ -n "${ATTNPROF_POSTGRES_URL:-}" ]; then
    "$attnprof" pull --db "$cache" --branch "$main_branch" ${fp:+--env "$fp"} --last "$window"
  else
    ATTNPROF_HISTORY_WINDOW="$window" ATTNPROF_BIN="$attnprof" \
      bash "$here/history.sh" fetch "$cache" "$fp"
  fi
  "$attnprof" prune --db "$cache" --keep-last "$window" >/dev/null
  "$attnprof" merge "$cache" -o "$db" >/dev/null
}

# record and run: the durable history is the baseline. The run comes first: its environment
# names the slice of history its comparison needs.
start="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
run_rc=0
plugin_flags=()
if [ "$own_repo" = false ] && [ -n "${ATTNPROF_PLUGINS:-}" ]; then
  mapfile -t plugin_flags < <(side_plugins head "$root")
  [ "${#plugin_flags[@]}" -eq "$(wc -w <<<"$ATTNPROF_PLUGINS")" ] || finish 2
fi
"$attnprof" run --db "$db" "${shard_flags[@]}" "${plugin_flags[@]}" "${run_args[@]}" "${suites[@]}" \
  | tee "$out/run.log" || run_rc=${PIPESTATUS[0]}
if [ "$run_rc" -ne 0 ] && [ "$run_rc" -ne 1 ]; then finish "$run_rc"; fi  # nothing stored
# The run this job stored ("run <id> stored in <db>"): what a record job appends to history.
run_id="$(sed -n 's/^run \([0-9a-f-]*\) stored in .*/\1/p' "$out/run.log" | tail -n 1)"
fp=""
[ -n "$run_id" ] && fp="$("$attnprof" show "$run_id" --db "$db" | sed -n 's/^env  *//p' | head -n 1)"
fetch_history "$fp"
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
  if [ -n "${ATTNPROF_POSTGRES_URL:-}" ]; then
    # The server is the durable history: this run (one transaction), and the annotations.
    "$attnprof" push --db "$db" ${run_id:+--run "$run_id"} --since "$start" | tee -a "$out/run.log"
  else
    stamp="$(date -u +%Y%m%dT%H%M%SZ)"
    ATTNPROF_BIN="$attnprof" bash "$here/history.sh" push "$out/history.jsonl" \
      "history/$name/${fp:+$fp/}$stamp-${GITHUB_SHA:-$(git rev-parse HEAD)}-${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-1}.jsonl"
  fi
fi
# A correctness failure fails the job even when the timings pass.
[ "$gate_rc" -eq 0 ] && gate_rc="$run_rc"
finish "$gate_rc"
