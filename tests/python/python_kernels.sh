#!/usr/bin/env bash
# Python attention end to end, as a user meets it: `attnprof run` on python.yaml calls the test's
# modules (modules.py) in attnprof-worker's embedded interpreter: a factory with kernel_args, a
# bare function, an eager GQA module checked against sdpa.math and stored with its cost matrix,
# whose interpreter row is its own; a py: reference; a block-level module; a wrong shape as the
# case's error at forward's line. errors.yaml: each way a user's code goes wrong is its case's error naming their file and
# line, the worker replaced where it died, and every case stored. compile.yaml: one torch.compile
# case (a graph break on purpose: two graphs), its compile.* metrics stored and shown, and the
# kernels Inductor generated as rows of its cost matrix. Bad names stop before anything runs.
# Exits 77 (skipped) where the worker was built without Python.
# Usage: python_kernels.sh BUILD_DIR
set -uo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d /tmp/attnprof-py-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp "$here"/*.py "$here"/*.yaml "$work/"
cd "$work"
export ATTNPROF_DB="$work/h.db"
source "$here/../lib/checks.sh"
attnprof="$build/attnprof"

source "$here/../lib/python_run.sh"
first_run python.yaml
expect "attnprof env says which Python runs py: kernels" 0 "py: kernels: +Python [0-9.]+ of .+, embedded" \
  -- "$attnprof" env
[ "$rc" = 3 ] && ok "run: exit 3 (the wrong shape is its case's error)" || bad "run: exit $rc (want 3)"
row() { grep -E "^$1 " <<<"$out"; }
for k in "py:modules.py:sdpa" "py:modules.py:make_attention" "py:modules.py:EagerAttention" \
         "py:modules.py:sdpa +ref" "py:modules.py:Block"; do
  key="${k% +ref}"
  grep -qE "/${key//./\\.} +ok " <<<"$out" && ok "$key is checked and measured" ||
    bad "$key is not ok"
done
grep -qE "modules\.py:[0-9]+: returned shape 1x2x32x15; a kernel-level case expects \[B, Hq, Sq, D\] = 1x2x32x16" <<<"$out" &&
  ok "a wrong shape names forward's file and line" || bad "the wrong shape's message"
grep -qE "b1-s16-fp32-none-block/py:modules\.py:Block +ok .*attention share: the module's own attention ops \(SDPA, FlexAttention\); attention [0-9.]+% of the block" <<<"$out" &&
  ok "a block-level module replaces the block, checked against the harness's; its share is its SDPA op's" ||
  bad "the block-level module's row"
grep -qE "py:modules\.py:EagerAttention +ok .*" <<<"$out" &&
  grep -q "backend: python eager (torch " <<<"$out" && ok "the backend says python eager" ||
  bad "no python eager backend line"

# The module's interpreter time is a row of its own, beside the ATen ops it ran.
expect "show: the interpreter row and the module's ATen ops" 0 \
  "python: modules\.py:EagerAttention .*" \
  -- "$attnprof" show latest --case '*/py:modules.py:EagerAttention'
expect "show: the matmuls under it" 0 "aten::bmm" \
  -- "$attnprof" show latest --case '*/py:modules.py:EagerAttention'
expect "checked against a py: reference in fp32" 0 "against py:modules\.py:make_attention" \
  -- "$attnprof" show latest --case 'tiny/prefill/b1-s24-*/py:modules.py:sdpa'

# Each way a user's code goes wrong: its case's error, naming the user's file and line.
out="$("$attnprof" run errors.yaml --case-timeout 15 --wide 2>&1)"
rc=$?
[ "$rc" = 3 ] && ok "errors: exit 3 (cases in error)" || bad "errors: exit $rc (want 3)"
check_error() {  # KERNEL PATTERN: the case's row (one line with --wide) says PATTERN
  if grep -E "/$1 +error" <<<"$out" | grep -qE -- "$2"; then
    ok "$1: $2"
  else
    bad "$1's error lacks /$2/"
  fi
}
check_error "py:modules.py:WrongDtype" "modules\.py:[0-9]+: returned dtype Double; this case's inputs are Float"
check_error "py:modules.py:FailsLater" "modules\.py:[0-9]+: ValueError: call 100 went wrong \(traceback: [^)]+\.log\)"
check_error "py:modules.py:Exits" "exited with status 3.*; the Python module's last frame: .*modules\.py:[0-9]+ \(in forward\)"
check_error "py:modules.py:Crashes" "signal 11 \(SIGSEGV\).*; the Python module's last frame: .*modules\.py:[0-9]+ \(in forward\)"
check_error "py:modules.py:Hangs" "hung: no answer in time; killed"
check_error "py:syntax_error.py:attention" "syntax_error\.py:4: SyntaxError: '\(' was never closed"
check_error "py:import_error.py:Attention" "import_error\.py:2: ModuleNotFoundError: No module named 'attnprof_no_such_module' \(Python [0-9.]+ of .*ATTNPROF_PYTHON"
check_error "py:modules.py:Missing" "modules\.py: has no Missing \(it defines: Block, BrokenGraph, .*sdpa\)"
check_error "py:modules.py:NOT_CALLABLE" "NOT_CALLABLE is a int, not a class or function"
grep -qE "/py:modules\.py:sdpa +ok" <<<"$out" && ok "a good module after all of them still runs" ||
  bad "the good module after the bad ones did not run"
log="$(grep -oE '/[^ ]+/attnprof-python/[0-9]+-[0-9]+\.log' <<<"$out" | head -1)"
[ -n "$log" ] && grep -q "ValueError: call 100 went wrong" "$log" &&
  ok "the traceback log holds the whole traceback" || bad "no traceback log ($log)"
expect "every case of the run is stored, the dead workers' too" 0 \
  "10 cases: 1 ok, 0 failed, 0 skipped, 9 error" -- "$attnprof" show latest

# A run with no ok case makes no baseline (a gate against an empty one passes anything).
"$attnprof" run errors.yaml --case '*WrongDtype' --db none-ok.db >/dev/null 2>&1
expect "baseline update from a run with no ok case: exit 3, nothing written" 3 \
  "no case of run .* is ok, so none can be a baseline; b\.yaml not written" \
  -- "$attnprof" baseline update --db none-ok.db -o b.yaml
[ ! -e b.yaml ] && ok "... and no b.yaml" || bad "an empty baseline was written"

# Bad names stop before anything runs, at the spot.
printf 'model: bert-base\nworkloads: [{seq_len: 16, kernels: ["py:modules.py:EagerAttention@turbo"]}]\n' >bad-mode.yaml
expect "an unknown compile mode is exit 2 at the spot" 2 \
  "bad-mode\.yaml:2:37: kernel \"py:modules\.py:EagerAttention@turbo\": unknown torch.compile mode \"turbo\"" \
  -- "$attnprof" validate bad-mode.yaml
printf 'model: bert-base\nworkloads: [{seq_len: 16, kernels: ["py:nope.py:A"]}]\n' >missing.yaml
expect "a missing file stops the run, exit 2" 2 \
  "missing\.yaml:2:.*kernel \"py:nope\.py:A\": no Python file at $work/nope\.py" \
  -- "$attnprof" run missing.yaml

# One torch.compile case (tiny, so its two graphs compile in well under a minute).
out="$("$attnprof" run compile.yaml 2>&1)"
rc=$?
echo "$out" | sed 's/^/    /'
[ "$rc" = 0 ] && ok "compile: exit 0" || bad "compile: exit $rc"
grep -qE "compiled in [0-9.]+ (s|ms) \(fresh cache\): 2 graphs, 1 graph break" <<<"$out" &&
  ok "run says how it compiled" || bad "run does not say how it compiled"
metrics="$("$attnprof" history --metric 'compile.*' --format csv 2>&1)"
for m in "compile.graphs,2" "compile.graph_breaks,1" "compile.recompiles,0"; do
  grep -q "${m%,*},${m#*,}\$" <<<"$metrics" && ok "stored: $m" || bad "not stored: $m ($metrics)"
done
expect "the cost matrix shows the kernels Inductor generated" 0 "cpp_fused_.*softmax" \
  -- "$attnprof" show latest --case '*BrokenGraph@compile'

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
[ "$fails" = 0 ]
