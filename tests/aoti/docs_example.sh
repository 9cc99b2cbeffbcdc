#!/usr/bin/env bash
# docs/scenarios.md's own-module example, run exactly as the page says: the module file and the
# scenario are taken from the page's code blocks that name them on their first line
# ("# my_attn.py", "# s.yaml"), and its shell block is run as written with the built attnprof
# first on PATH. A page that drifts from what works fails here. One package, cached by content
# like every package `attnprof package` makes. Exits 77 (skipped) without the venv.
# Usage: docs_example.sh BUILD_DIR
set -uo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/ci/env.sh"
[ -x "$ATTNPROF_VENV/bin/python" ] || { echo "skip: no venv at $ATTNPROF_VENV (ci/setup.sh)"; exit 77; }
work="$(mktemp -d /tmp/attnprof-docs-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cd "$work"
export ATTNPROF_DB="$work/h.db" PATH="$build:$PATH"
# The section's blocks: named files written out, the sh block kept to run.
python3 - "$root/docs/scenarios.md" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = text[text.index("### Your own module"):]
section = section[: section.index("\n## ")]
blocks = re.findall(r"^```(\w*)\n(.*?)^```$", section, re.S | re.M)
named = 0
for lang, body in blocks:
    m = re.match(r"# ([\w.]+\.(py|yaml))\n", body)
    if m:
        open(m.group(1), "w").write(body)
        named += 1
    elif lang == "sh" and not __import__("os").path.exists("example.sh"):
        open("example.sh", "w").write(body)
sys.exit(0 if named == 2 else 1)
PY
[ $? = 0 ] && [ -f example.sh ] || { echo "FAIL: the page lacks my_attn.py, s.yaml or the sh block"; exit 1; }
out="$(bash -e example.sh 2>&1)"
rc=$?
echo "$out" | sed 's/^/    | /'
[ "$rc" = 0 ] || { echo "FAIL: the example exits $rc"; exit 1; }
for s in 64 128; do
  grep -qE "^small/prefill/b1-s$s-fp32-causal/aoti:my_attn.pt2 +ok" <<<"$out" ||
    { echo "FAIL: the package's s$s case is not ok"; exit 1; }
done
echo "ok: the docs' example packages the module and runs it, checked against sdpa.math"
