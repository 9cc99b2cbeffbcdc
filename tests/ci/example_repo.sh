#!/usr/bin/env bash
# examples/kernel-repo as a team's own repository gated by attnprof: a git repository of it with
# three commits (the kernel; a comment-only change; a change that computes the attention twice),
# and ci/github/gate.sh run on each change as the action runs it in a pull-request job (GitHub's
# variables and event file simulated, attnprof built from the action's own tree, the user's
# build command run in the head checkout and in a worktree of the merge base).
#   example_repo.sh BUILD_DIR      (the attnprof build of this tree: the action's build/)
# Checks: the comment-only change passes without measuring (identical code); the slow change
# fails (exit 1) with the regression, the op that moved and both commits in the markdown, and
# the PR comment's body written.
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: example_repo.sh BUILD_DIR}" && pwd)"
[ "$build" = "$src/build" ] || {
  echo "SKIP: the action builds attnprof into its tree's build/; this build is $build"
  exit 77
}
tmp="$(mktemp -d)"
trap 'git -C "$tmp/repo" worktree prune 2>/dev/null || true; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -q -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "$1 lacks \"$2\""; }; }

cp -r "$src/examples/kernel-repo" "$tmp/repo"
cd "$tmp/repo"
git init --quiet -b main
git config user.name test && git config user.email test@example.com
git add -A && git commit --quiet -m "my attention kernel"
base="$(git rev-parse HEAD)"
git checkout --quiet -b comment
sed -i '1s/.*/\/\/ my_attention.cpp: attention as a LibTorch custom op (comment reworded)./' my_attention.cpp
git commit --quiet -am "reword a comment"
comment="$(git rev-parse HEAD)"
git checkout --quiet -b slow "$base"
python3 - my_attention.cpp <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "  return at::matmul(at::softmax(scores, -1), values);\n"
assert old in s
s = s.replace(old, "  at::Tensor out = at::matmul(at::softmax(scores, -1), values);\n"
                   "  out.copy_(at::matmul(at::softmax(scores, -1), values));  // checked twice\n"
                   "  return out;\n")
open(p, "w").write(s)
PY
git commit --quiet -am "compute the attention twice"
slow="$(git rev-parse HEAD)"

source "$src/tests/lib/pr_job.sh"
# The gate's inputs, as the repository's workflow gives them (docs/ci.md).
inputs=("ATTNPROF_BUILD_COMMAND=cmake -S . -B build -G Ninja >/dev/null && cmake --build build"
        ATTNPROF_PLUGINS=build/libmy_attention.so ATTNPROF_SUITES=attnprof.yaml)

echo "== a comment-only change: identical code, passes without measuring"
rc=0
pr_job comment "$comment" 11 "${inputs[@]}" || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/comment/log"; fail "the comment-only change exited $rc, not 0"; }
expect "$tmp/comment/log" "base and head built identical code"
expect "$tmp/comment/summary.md" "## attnprof gate: passed"

echo "== the attention computed twice: a regression, the op named, both commits named"
rc=0
pr_job slow "$slow" 12 "${inputs[@]}" || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/slow/log"; fail "the slow change exited $rc, not 1"; }
md="$tmp/slow/runner/attnprof/attnprof/gate.md"
[ -s "$md" ] || { cat "$tmp/slow/log"; fail "no $md"; }
expect "$md" "regression"
expect "$md" "my_ns::attention"
expect "$md" "${base:0:12}"
expect "$md" "${slow:0:12}"
expect "$tmp/slow/summary.md" "## attnprof gate: failed"
body="$tmp/slow/runner/attnprof/attnprof/comment"
[ "$(cat "$body/pr")" = 12 ] || fail "the PR comment has no PR number"
[ -s "$body/attnprof.md" ] || fail "no PR comment body"
grep -E "^[^ ]+ +regression" "$tmp/slow/log" | head -n 3
echo "example repository: the comment passes, the slowdown fails the gate"
