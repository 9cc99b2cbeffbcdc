#!/usr/bin/env bash
# A user's own attention module end to end, as a user meets it: `attnprof package` packages the
# test's RoPE attention (rope_attention.py) for rope.yaml's cases in bf16, its fp32 twin (named
# as the bf16 cases' reference), and a copy with a planted bug (the rotation's sign flipped;
# three packages, cached by content under $ATTNPROF_HOME/aoti, so only the first pass on a
# machine pays half a minute to a minute each). Then `attnprof run`: the module is ok against
# its twin and measured; the bug fails the check with the largest error and where; against the
# default sdpa.math the module fails (RoPE is not SDPA); with reference none it is "not checked"
# in the run table, the store and the JSON report. And what is refused before anything is
# exported, with exit 2 and the spot: a forward that cannot take the case's inputs, a mask the
# module has no parameter for, a package path the scenario does not name.
# Usage: own_module.sh BUILD_DIR
set -uo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/ci/env.sh"
[ -x "$ATTNPROF_VENV/bin/python" ] || { echo "skip: no venv at $ATTNPROF_VENV (ci/setup.sh)"; exit 77; }
work="$(mktemp -d /tmp/attnprof-own-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp "$here/rope_attention.py" "$here/rope.yaml" "$here/masked.yaml" "$work/"
cd "$work"
export ATTNPROF_DB="$work/h.db"
source "$here/../lib/checks.sh"
attnprof="$build/attnprof"

# Refused before anything is exported, each naming the spot.
expect "a forward that cannot take q, k, v is refused at its line" 2 \
  "rope_attention.py:31: TwoInputs.forward\(q, k\) cannot be called with the 3 inputs \(q, k, v\) that tiny/prefill/b1-s32-bf16-none/aoti:rope.pt2 passes" \
  -- "$attnprof" package rope_attention.py:TwoInputs --scenario rope.yaml -o rope.pt2
[ ! -e rope.pt2 ] && ok "... and made no package" || bad "a refused module left rope.pt2"
expect "a mask the module takes no parameter for is refused, naming the mask" 2 \
  "rope_attention.py:26: RopeAttention.forward\(q, k, v\) cannot be called with the 4 inputs \(q, k, v, mask\) .*mask padding is passed to the module as its last input" \
  -- "$attnprof" package rope_attention.py:RopeAttention --scenario masked.yaml -o masked.pt2
expect "a package the scenario does not name is refused" 2 \
  "rope.yaml: no case names $work/other.pt2 as its kernel or reference" \
  -- "$attnprof" package rope_attention.py:RopeAttention --scenario rope.yaml -o other.pt2
expect "a module the file does not define is refused, naming what it defines" 2 \
  "defines no Rope \(it defines: RopeAttention, TwoInputs\)" \
  -- "$attnprof" package rope_attention.py:Rope --scenario rope.yaml -o rope.pt2

# The three packages: each command says which python and torch make it, then what it makes.
for spec in "rope.pt2" "rope-bug.pt2 --arg bug=true" "rope-fp32.pt2"; do
  set -- $spec
  out="$1"
  shift
  made="$("$attnprof" package rope_attention.py:RopeAttention --scenario rope.yaml -o "$out" "$@" 2>&1)"
  rc=$?
  if [ "$rc" = 0 ] && head -1 <<<"$made" | grep -qE "^packaging with .*/python.* \(torch [0-9.]+, the torch attnprof-worker links\)$" &&
     grep -qE "$out: (making RopeAttention from rope_attention.py for [0-9] case\(s\), kernel level|from the cache)" <<<"$made"; then
    ok "attnprof package makes $out, saying with which python and torch"
  else
    bad "attnprof package -o $out (exit $rc):"; sed 's/^/    /' <<<"$made" | tail -20
  fi
done
meta() {
  "$ATTNPROF_VENV/bin/python" - "$1" <<'PY'
import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for n in z.namelist():
        if n.endswith("wrapper_metadata.json"):
            m = json.loads(json.loads(z.read(n))["attnprof"])
            print(m["module"], m["dtype"], m["level"], m["mask_input"], [i["name"] for i in m["inputs"]], m["args"])
PY
}
[ "$(meta rope.pt2)" = "rope_attention.py:RopeAttention bf16 kernel False ['q', 'k', 'v'] {}" ] &&
  ok "the package records the module, its dtype, level, mask and inputs" ||
  bad "rope.pt2's metadata: $(meta rope.pt2)"
[ "$(meta rope-fp32.pt2)" = "rope_attention.py:RopeAttention fp32 kernel False ['q', 'k', 'v'] {}" ] &&
  ok "the reference's package is made in fp32" || bad "rope-fp32.pt2's metadata: $(meta rope-fp32.pt2)"
[ "$(meta rope-bug.pt2)" = "rope_attention.py:RopeAttention bf16 kernel False ['q', 'k', 'v'] {'bug': True}" ] &&
  ok "constructor arguments are recorded" || bad "rope-bug.pt2's metadata: $(meta rope-bug.pt2)"

out="$("$attnprof" run rope.yaml 2>&1)"
rc=$?
echo "$out" | sed 's/^/    | /'
# row KEY: the case's row and the note lines under it, as one line with single spaces: a note
# the table wraps (a busy machine's "unstable: ..." makes it long) reads as it would unwrapped.
row() { awk -v k="$1" '$1 == k { on = 1; print; next } on && /^ / { print; next } { on = 0 }' <<<"$out" | tr '\n' ' ' | tr -s ' '; }
[ "$rc" = 1 ] && ok "run exits 1: two cases failed their checks" || bad "run exit $rc (want 1)"
row "tiny/prefill/b1-s32-bf16-none/aoti:rope.pt2" | grep -qE " ok +[0-9.]+ (us|ms)" &&
  ok "the module is ok against its fp32 twin, and measured" || bad "rope.pt2 against its twin"
row "tiny/prefill/b1-s32-bf16-none/aoti:rope-bug.pt2" |
  grep -qE " failed .*output differs from aoti:rope-fp32.pt2 \(fp32\): max abs error [0-9.e-]+ at \[0, [01], [0-9]+, [0-9]+\]" &&
  ok "the planted bug fails against the twin, with the largest error and where" ||
  bad "rope-bug.pt2 against its twin"
row "tiny/prefill/b1-s32-bf16-none-seed1/aoti:rope.pt2" |
  grep -qE " failed .*output differs from sdpa.math \(fp32\): max abs error" &&
  ok "without a reference of its own, the module fails against sdpa.math" ||
  bad "rope.pt2 against sdpa.math"
row "tiny/prefill/b1-s32-bf16-none-seed2/aoti:rope.pt2" |
  grep -qE " ok +[0-9.]+ (us|ms) .*not checked \(reference: none\)" &&
  ok "reference none: ok, measured, and 'not checked' in the run table" ||
  bad "reference none in the run table"
grep -q "1 not checked (reference: none)" <<<"$out" &&
  ok "... and in the counts" || bad "the counts do not say not checked"

# The store: each case's reference (schema v8), none for the unchecked one.
refs="$("$ATTNPROF_VENV/bin/python" -c '
import sqlite3, sys
for k, r in sqlite3.connect(sys.argv[1]).execute("SELECT case_key, reference FROM cases ORDER BY case_key"):
    print(k.split("/", 2)[2], r)' "$ATTNPROF_DB")"
want="b1-s32-bf16-none-seed1/aoti:rope.pt2 sdpa.math
b1-s32-bf16-none-seed2/aoti:rope.pt2 none
b1-s32-bf16-none/aoti:rope-bug.pt2 aoti:rope-fp32.pt2
b1-s32-bf16-none/aoti:rope.pt2 aoti:rope-fp32.pt2
b1-s32-bf16-none/eager sdpa.math
b1-s32-bf16-none/sdpa.flash sdpa.math"
[ "$refs" = "$want" ] && ok "the store keeps each case's reference" ||
  { bad "stored references:"; sed 's/^/    /' <<<"$refs"; }

# The JSON report says it too.
"$attnprof" compare --baseline history --json report.json >/dev/null 2>&1
verdict="$("$ATTNPROF_VENV/bin/python" -c '
import json, sys
for v in json.load(open(sys.argv[1]))["verdicts"]:
    if v["case"].endswith("seed2/aoti:rope.pt2"):
        print(v["reference"], "|", v["not_checked"], "|", v["reason"])' report.json)"
grep -qx "none | not checked (reference: none) | .*not checked (reference: none)" <<<"$verdict" &&
  ok "the JSON report: reference none, not_checked, and the reason says so" ||
  bad "JSON report verdict: $verdict"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all own-module checks passed"
