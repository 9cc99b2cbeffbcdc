#!/usr/bin/env bash
# Compiled packages end to end, as a user meets them: ci/aoti-package.sh makes tiny.yaml's two
# packages (a kernel for decode, a block for causal prefill; cached by content under
# $ATTNPROF_HOME/aoti, so only the first pass on a machine pays about a minute each), then
# `attnprof run` checks them against sdpa.math and the harness's own block, measures and traces
# them. Then what must be refused, each with its message and exit code: a package made for other
# shapes (skip naming the dim), a corrupted file (case error naming the path), a package that
# claims another torch version (error naming both), a package without metadata called with a
# mask it does not take (error naming both counts and the mask), a package that is not there
# (exit 2 before anything runs; validate only notes it).
# Usage: aoti.sh BUILD_DIR
set -uo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/ci/env.sh"
[ -x "$ATTNPROF_VENV/bin/python" ] || { echo "skip: no venv at $ATTNPROF_VENV (ci/setup.sh)"; exit 77; }
work="$(mktemp -d /tmp/attnprof-aoti-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp "$here/tiny.yaml" "$here/wrong-shape.yaml" "$work/"
cd "$work"
export ATTNPROF_DB="$work/h.db"
source "$here/../lib/checks.sh"

# A package not made yet: validate notes it, run refuses before measuring.
expect "validate notes a missing package" 0 \
  "note: .*tiny.yaml:[0-9]+:[0-9]+: kernel \"aoti:tiny-decode.pt2\": no package at $work/tiny-decode.pt2; make it from your module with attnprof package FILE.py:NAME --scenario .*tiny.yaml -o $work/tiny-decode.pt2, or from attnprof's own SDPA module with ci/aoti-package.sh" \
  -- "$build/attnprof" validate tiny.yaml
expect "run refuses a missing package" 2 "no package at $work/tiny-block.pt2" \
  -- "$build/attnprof" run tiny.yaml

# Make them (or take them from the cache), then again: nothing to do.
expect "the script makes both packages" 0 "tiny-block.pt2: (making|from the cache)" \
  -- "$root/ci/aoti-package.sh" tiny.yaml --attnprof "$build/attnprof"
expect "a second pass finds them up to date" 0 "tiny-decode.pt2: up to date" \
  -- "$root/ci/aoti-package.sh" tiny.yaml --attnprof "$build/attnprof"

# End to end: both packages ok beside sdpa.math, traced; the block package's attention share is
# its own SDPA op's (it used to say "not separable" beside an SDPA row of its own).
expect "run: the kernel and block packages pass their checks" 0 \
  "tiny/decode/b2-q1-kv64-fp32-none/aoti:tiny-decode.pt2 +ok" \
  -- "$build/attnprof" run tiny.yaml
out="$("$build/attnprof" run tiny.yaml --case '*block*aoti*' --wide 2>&1)"
if grep -qE "block/aoti:tiny-block.pt2 +ok" <<<"$out" &&
   grep -qE "attention share: the package's own attention ops \(SDPA, FlexAttention\); attention [0-9.]+% of the block" <<<"$out"; then
  ok "the block package runs as the whole block; its attention share is its own SDPA op's"
else
  bad "block package:"; sed 's/^/    /' <<<"$out" | tail -30
fi
# The metric itself: stored for the harness's block and for the package (from its own op).
shares="$("$build/attnprof" export | python3 -c '
import json, sys
for line in sys.stdin:
    run = json.loads(line).get("run")
    for c in (run or {}).get("cases", []):
        if c["spec"]["level"] == "block" and c["status"] == "ok":
            print(c["spec"]["kernel"], "attention.share" in c["metrics"])
' | sort -u)"
if grep -qx "sdpa.math True" <<<"$shares" && grep -qx "aoti:tiny-block.pt2 True" <<<"$shares" &&
   ! grep -qx "aoti:tiny-block.pt2 False" <<<"$shares"; then
  ok "attention.share: stored for the harness's block and for the package"
else
  bad "attention.share per block kernel:"; sed 's/^/    /' <<<"$shares"
fi
# Inductor's generated CPU kernels are rows of the cost matrix, under the package's call.
expect "the cost matrix maps the generated kernels to the package's call" 0 \
  "cpp_fused" -- "$build/attnprof" show latest --case '*block/aoti*'
expect "... and its call is the user scope attnprof::aoti:..." 0 \
  "attnprof::aoti:tiny-block.pt2" -- "$build/attnprof" show latest --case '*block/aoti*'

# Other shapes than the package was made for: a skip that names the dim.
expect "a package made for q_len 1 skips a case with 4 queries" 0 \
  "skipped.*input q dim 2 is 4; the package was made for 1" \
  -- "$build/attnprof" run wrong-shape.yaml

# Packages without our metadata (a user's own): called by the documented convention; a call
# that fails is the case's error with LibTorch's message. Made here by dropping the metadata.
# rewrite_metadata SRC DST PYTHON-EXPR: copies package SRC to DST with its "attnprof" metadata
# (a dict, `ours`) replaced by the expression's value (None: dropped).
rewrite_metadata() {
  "$ATTNPROF_VENV/bin/python" - "$@" <<'PY'
import json, sys, zipfile
src_path, dst_path, expr = sys.argv[1:]
src = zipfile.ZipFile(src_path)
with zipfile.ZipFile(dst_path, "w") as dst:
    for info in src.infolist():
        data = src.read(info.filename)
        if info.filename.endswith("_metadata.json"):
            meta = json.loads(data)
            if "attnprof" in meta:
                ours = eval(expr, {"ours": json.loads(meta["attnprof"])})
                if ours is None:
                    del meta["attnprof"]
                else:
                    meta["attnprof"] = json.dumps(ours)
            data = json.dumps(meta).encode()
        dst.writestr(info, data)
PY
}
rewrite_metadata tiny-decode.pt2 user-decode.pt2 None
rewrite_metadata tiny-block.pt2 user-block.pt2 None
sed -e 's/aoti:tiny-decode.pt2/aoti:user-decode.pt2", "aoti:user-block.pt2/' \
    -e '/name: block/,$d' -e 's/name: aoti-test/name: aoti-user/' tiny.yaml > user.yaml
out="$("$build/attnprof" run user.yaml 2>&1)"
rc=$?
if [ "$rc" = 3 ] && grep -qE "aoti:user-decode.pt2 +ok" <<<"$out" &&
   grep -q "backend: aoti (no attnprof metadata)" <<<"$out" &&
   grep -qE "aoti:user-block.pt2 +error" <<<"$out" &&
   grep -q "$work/user-block.pt2: .*expected inputs vector size to be 5, but got 3" <<<"$out"; then
  ok "a package without metadata runs by the convention; a failing call is the case's error"
else
  bad "packages without metadata (exit $rc):"; sed 's/^/    /' <<<"$out" | tail -30
fi

# The issue a user met: a module that masks itself, packaged without metadata, run for a case
# with a custom mask file, which passes it a fourth input. The error names both counts, the
# inputs and the mask (the stored message, whole; the table cuts long notes).
python3 -c 'print(" ".join(["0"] * 64))' > row.mask
sed -e 's/aoti:tiny-decode.pt2/aoti:user-decode.pt2/' -e '/name: block/,$d' \
    -e 's/name: aoti-test/name: aoti-user-mask/' -e 's/    kv_len: 64/    kv_len: 64\n    mask: custom\n    mask_file: row.mask/' \
    tiny.yaml > user-mask.yaml
"$build/attnprof" run user-mask.yaml --case '*aoti*' >/dev/null 2>&1
msg="$("$build/attnprof" export | python3 -c '
import json, sys
for line in sys.stdin:
    run = json.loads(line).get("run")
    for c in (run or {}).get("cases", []):
        if c["spec"]["suite"] == "aoti-user-mask":
            print(c["status"], c["message"])')"
if grep -qF "error $work/user-decode.pt2: expected inputs vector size to be 3, but got 4" <<<"$msg" &&
   grep -qF "(the package takes 3 inputs; this case passes 4: q, k, v, mask: mask custom is an input of this case" <<<"$msg"; then
  ok "a package called with an input it does not take: the error names both and the mask"
else
  bad "a mask the package does not take: $msg"
fi

# Our metadata says another dtype: a skip naming both, before the code is loaded.
rewrite_metadata tiny-decode.pt2 other-dtype.pt2 '{**ours, "dtype": "bf16"}'
sed -e 's/aoti:tiny-decode.pt2/aoti:other-dtype.pt2/' tiny.yaml > other-dtype.yaml
expect "a package for another dtype is a skip naming both" 0 \
  "aoti:other-dtype.pt2: skipped.*the package holds dtype bf16; this case has fp32" \
  -- "$build/attnprof" run other-dtype.yaml --case '*other-dtype*'

# A corrupted file: a case error naming the path, exit 3 like every case error.
head -c 5000 tiny-decode.pt2 > broken.pt2 && mv broken.pt2 tiny-decode.pt2
expect "a corrupted package is a case error naming the path" 3 \
  "error.*$work/tiny-decode.pt2: not a readable AOTInductor package" \
  -- "$build/attnprof" run tiny.yaml --case '*aoti:tiny-decode*'

# Another torch version in the metadata: refused with both versions named.
rewrite_metadata tiny-block.pt2 other-torch.pt2 '{**ours, "torch": "2.9.1+cu128"}'
mv other-torch.pt2 tiny-block.pt2
expect "a package from another torch version is refused naming both" 3 \
  "package made by torch 2\.9\.1\+cu128; this worker runs LibTorch 2\.11\.0: make it again with ci/aoti-package.sh" \
  -- "$build/attnprof" run tiny.yaml --case '*aoti:tiny-block*'

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all compiled-package checks passed"
