#!/usr/bin/env bash
# A team's repository of Python attention gated by attnprof: a git repository holding an eager
# GQA attention module (modules.py) and a suite naming it as py:modules.py:EagerAttention, with
# nothing to build; a pull request that makes the module compute its attention twice; and
# ci/github/gate.sh run on it as the action runs it in a pull-request job (GitHub's variables and
# event file simulated, attnprof from the action's own tree). The base side calls the merge
# base's copy of the module under the case's name (--substitute), the head side the head's.
#   python_gate.sh BUILD_DIR      (the attnprof build of this tree: the action's build/)
# Checks: the slowdown fails the gate (exit 1) with the regression and an op that moved in the
# markdown; the same module on both sides (a README change) passes without measuring; `attnprof
# bisect` names the slow commit, each step calling its commit's own copy of the module.
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: python_gate.sh BUILD_DIR}" && pwd)"
[ "$build" = "$src/build" ] || {
  echo "SKIP: the action builds attnprof into its tree's build/; this build is $build"
  exit 77
}
grep -q attnprof_python_runtime "$build/attnprof-worker" || {
  echo "SKIP: this attnprof-worker was built without Python"
  exit 77
}
tmp="$(mktemp -d)"
trap 'git -C "$tmp/repo" worktree prune 2>/dev/null || true; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -q -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "$1 lacks \"$2\""; }; }

mkdir -p "$tmp/repo"
cp "$src/tests/python/modules.py" "$tmp/repo/"
cat >"$tmp/repo/attnprof.yaml" <<'YAML'
name: mine
models:
  small: {heads: 4, kv_heads: 2, head_dim: 32, hidden: 128, max_positions: 1024}
model: small
hardware: {device: cpu, threads: 1}
measure: {warmup: 20ms, time_budget: 2s}
gate: {tolerance: 10%}
kernel_args:
  "py:modules.py:EagerAttention": {causal: true}
workloads:
  - name: prefill
    batch: 1
    seq_len: 128
    mask: causal
    kernels: ["py:modules.py:EagerAttention"]
YAML
echo "# my attention" >"$tmp/repo/README.md"
cd "$tmp/repo"
git init --quiet -b main
git config user.name test && git config user.email test@example.com
git add -A && git commit --quiet -m "my attention module"
base="$(git rev-parse HEAD)"
git checkout --quiet -b docs
echo "More words." >>README.md
git commit --quiet -am "docs only"
docs="$(git rev-parse HEAD)"
git checkout --quiet -b slow "$base"
# The planted slowdown: EagerAttention computes its attention twice (TwiceAttention's body).
printf '\nEagerAttention = TwiceAttention  # the attention computed twice\n' >>modules.py
git commit --quiet -am "compute the attention twice"
slow="$(git rev-parse HEAD)"

source "$src/tests/lib/pr_job.sh"
# The gate's inputs: the suite alone, nothing to build (docs/ci.md).
inputs=(ATTNPROF_SUITES=attnprof.yaml)

echo "== a docs-only change: the same module on both sides, passes without measuring"
rc=0
pr_job docs "$docs" 21 "${inputs[@]}" || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/docs/log"; fail "the docs-only change exited $rc, not 0"; }
expect "$tmp/docs/log" "base and head built identical code (1 file(s) compared: modules.py)"

echo "== the module computes its attention twice: a regression, with the ops that moved"
rc=0
pr_job slow "$slow" 22 "${inputs[@]}" || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/slow/log"; fail "the slow change exited $rc, not 1"; }
md="$tmp/slow/runner/attnprof/attnprof/gate.md"
[ -s "$md" ] || { cat "$tmp/slow/log"; fail "no $md"; }
expect "$md" "regression"
expect "$md" "py:modules.py:EagerAttention"
grep -qE "aten::(bmm|_softmax|matmul)" "$md" || { cat "$md"; fail "$md names no op that moved"; }
expect "$md" "${slow:0:12}"
grep -E "^[^ ]+ +regression" "$tmp/slow/log" | head -n 3; grep -E "aten::" "$md" | head -n 5

echo "== bisect: each step calls its own commit's copy of the module, nothing to build"
rc=0
"$build/attnprof" bisect --build-command true --db "$tmp/bisect.db" --work "$tmp/work" \
  --good "$base" --bad "$slow" attnprof.yaml >"$tmp/bisect.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/bisect.log"; fail "bisect exited $rc, not 0"; }
expect "$tmp/bisect.log" "first bad commit: $slow compute the attention twice"
echo "python module repository: the docs change passes, the slowdown fails the gate and bisects"
