#!/usr/bin/env bash
# What `attnprof package` says of a module that ends or breaks the packaging before a package is
# made, each refused before anything is exported (seconds, no compile): a module that calls
# os._exit(0) or sys.exit(0) while imported (exit 2, which module; os._exit used to exit 0 with
# no package and no word), one that crashes while imported (exit 3, the signal and the module;
# it used to exit 3 with no word), and a forward whose output has another shape than the case
# reads back (exit 2 at forward's line; it used to be packaged and fail only at run time); an
# import that fails (exit 2 at its line, with which python ran and how to choose another) and a
# forward export cannot trace (exit 2 at the user's line, the exception, the traceback's log; it
# used to be exit 1 with two raw tracebacks), and a factory's module from another file (its line, then
# that forward's file and line); and a packaging python that outlives a killed attnprof.
# Usage: package_refusals.sh BUILD_DIR
set -uo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/ci/env.sh"
[ -x "$ATTNPROF_VENV/bin/python" ] || { echo "skip: no venv at $ATTNPROF_VENV (ci/setup.sh)"; exit 77; }
work="$(mktemp -d /tmp/attnprof-refusals-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp "$here/rope.yaml" "$work/"
cd "$work"
fails=0
# expect WHAT RC PATTERN MODULE: `attnprof package MODULE` for rope.yaml's rope.pt2 exits RC,
# prints a line matching PATTERN, and makes no package.
expect() {
  local what="$1" rc="$2" pattern="$3" module="$4" out got
  out="$("$build/attnprof" package "$module" --scenario rope.yaml -o rope.pt2 2>&1)"
  got=$?
  if [ "$got" != "$rc" ] || ! grep -qE -- "$pattern" <<<"$out" || [ -e rope.pt2 ]; then
    echo "FAIL: $what: exit $got (want $rc), package made: $([ -e rope.pt2 ] && echo yes || echo no), output lacks /$pattern/:"
    sed 's/^/    /' <<<"$out" | tail -20
    fails=$((fails + 1))
  else
    echo "ok: $what"
  fi
}

printf 'import os\nos._exit(0)\n' >exits.py
expect "a module that calls os._exit(0) when imported: exit 2, naming it" 2 \
  "^$work/exits.py: the packaging python exited with status 0 while importing; no package was made" \
  exits.py:M
printf 'import sys\nsys.exit(0)\n' >sys_exits.py
expect "a module that calls sys.exit(0) when imported: exit 2, naming it" 2 \
  "^error: $work/sys_exits.py: importing it called sys.exit\(0\): a module to package must not exit when imported" \
  sys_exits.py:M
printf 'import ctypes\nctypes.string_at(0)\n' >crashes.py
expect "a module that crashes when imported: exit 3, the signal and the module" 3 \
  "^attnprof: $work/crashes.py: the packaging python was killed by signal 11 \(SIGSEGV\) while importing; no package was made" \
  crashes.py:M
# attnprof killed (CI's timeout, say) while its packaging python is busy: the python goes with it.
printf 'import time\ntime.sleep(600)\n' >hangs.py
"$build/attnprof" package hangs.py:M --scenario rope.yaml -o rope.pt2 >hangs.log 2>&1 &
ap=$!
child=""
for _ in $(seq 1 1200); do  # the python starts at once; up to two minutes on a loaded machine
  child="$(pgrep -P "$ap" | head -1)"
  [ -n "$child" ] && break
  kill -0 "$ap" 2>/dev/null || break
  sleep 0.1
done
kill -9 "$ap" 2>/dev/null
wait "$ap" 2>/dev/null
gone=no
if [ -n "$child" ]; then
  for _ in $(seq 1 300); do
    # Gone, or a zombie its new parent has not reaped yet: ended either way.
    case "$(ps -o stat= -p "$child" 2>/dev/null)" in '' | Z*) gone=yes; break ;; esac
    sleep 0.1
  done
fi
if [ "$gone" = yes ]; then
  echo "ok: attnprof package killed: its packaging python ends with it"
else
  echo "FAIL: attnprof package killed: its packaging python (pid ${child:-none seen}) outlived it"
  [ -n "$child" ] && kill -9 "$child" 2>/dev/null
  fails=$((fails + 1))
fi
rm -f rope.pt2

cat >half.py <<'PY'
import torch


class Half(torch.nn.Module):
    def forward(self, q, k, v):
        return v[..., : v.shape[-1] // 2]
PY
expect "a forward whose output is not q's shape: exit 2 at forward's line" 2 \
  "^error: $work/half.py:5: Half.forward\(q \[2, 2, 16, 16\], k \[2, 2, 16, 16\], v \[2, 2, 16, 16\]\) returned shape \[2, 2, 16, 8\]; tiny/prefill/b1-s32-bf16-none/aoti:rope.pt2 reads back q's shape \[2, 2, 16, 16\] \(kernel level" \
  half.py:Half

printf 'import torch\nimport attnprof_no_such_module\n' >imports.py
expect "a module whose import fails: exit 2 at its line, which python, how to pick another" 2 \
  "^error: $work/imports.py:2: importing it failed: ModuleNotFoundError: No module named 'attnprof_no_such_module' \(python [0-9.]+ of .*; ATTNPROF_PYTHON=/path/to/python picks another.*\(traceback: [^)]+\.log\)" \
  imports.py:M
cat >branchy.py <<'PY'
import torch


class Branchy(torch.nn.Module):
    def forward(self, q, k, v):
        if q.sum() > 0:  # data-dependent control flow: torch.export cannot trace it
            return q
        return k
PY
expect "a module export refuses: exit 2 at the user's line with the exception and a log" 2 \
  "^error: $work/branchy.py:6: exporting Branchy failed: [A-Za-z]+.*\(traceback: [^)]+\.log\)" \
  branchy.py:Branchy

# A factory in the user's file that makes another file's module (transformers' LlamaAttention,
# whose forward takes hidden states): the factory's line in the user's file first, then where
# that forward is (it used to name line 232 of the user's 7-line file).
if "$ATTNPROF_VENV/bin/python" -c 'import transformers' 2>/dev/null; then
  cat >factory.py <<'PY'
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaAttention


def make():
    return LlamaAttention(LlamaConfig(hidden_size=32, num_attention_heads=2,
                                      num_key_value_heads=2, head_dim=16), 0)
PY
  expect "a factory's module refused: the factory's line, then the class's forward" 2 \
    "^error: $work/factory\.py:5: make made LlamaAttention, whose forward is at .*/modeling_llama\.py:[0-9]+: make\.forward\(q " \
    factory.py:make
else
  echo "skip: transformers is not importable by $ATTNPROF_VENV/bin/python (ci/setup.sh installs it for the tests)"
fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all package refusal checks passed"
