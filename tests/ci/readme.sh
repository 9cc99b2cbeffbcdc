#!/usr/bin/env bash
# README.md's command blocks, run as a reader runs them: every ```sh block, in order, in one
# working folder (the repository's ci/, scenarios/ and examples/ linked in, `build` and
# `../base/build` the build under test, `attnprof` on PATH, the history ./attnprof.db), each
# with `bash -e`: a block that fails, or a README that drifts from what works, fails here. The
# Quick start's output is checked for what the README says it prints. One change: its
# `./ci/test` lists the tests (`-N`) instead of running them, since a test cannot run the suite
# it is part of; the whole suite is what CI runs (.ci/run ends in ./ci/test).
#   readme.sh BUILD_DIR
set -uo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: readme.sh BUILD_DIR}" && pwd)"
# shellcheck source=tests/lib/checks.sh
source "$src/tests/lib/checks.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/work" "$tmp/base"
for d in ci scenarios examples; do ln -s "$src/$d" "$tmp/work/$d"; done
ln -s "$build" "$tmp/work/build"
ln -s "$build" "$tmp/base/build"
cd "$tmp/work" || exit 1
unset ATTNPROF_DB
export ATTNPROF_BUILD="$build" PATH="$build:$PATH"

python3 - "$src/README.md" <<'PY' || { bad "README.md has no sh block"; exit 1; }
import re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"^```sh\n(.*?)^```$", text, re.S | re.M)
for i, body in enumerate(blocks, 1):
    body = re.sub(r"^\./ci/test(?=\s|$)", "./ci/test -N", body, flags=re.M)
    open(f"block{i}.sh", "w").write(body)
open("count", "w").write(str(len(blocks)))
sys.exit(len(blocks) < 3)
PY

for n in $(seq 1 "$(cat count)"); do
  f="block$n.sh"
  printf '== README block %s:\n' "$n"; sed 's/^/    $ /' "$f"
  if bash -e "$f" >"out$n.log" 2>&1; then
    ok "README block $n"
  else
    bad "README block $n exits non-zero:"; tail -40 "out$n.log" | sed 's/^/    | /'
  fi
done

# The Quick start's first block prints what README shows: the cases, the table, where it went.
expect_in() { grep -qE -- "$2" "$1" && ok "$3" || bad "$3: $1 lacks /$2/"; }
expect_in out1.log '^attnprof: 16 case\(s\)' "the Quick start runs the smoke suite's 16 cases"
expect_in out1.log '^case +status +median' "the Quick start prints the results table"
expect_in out1.log '^16 cases: 16 ok' "every smoke case ends ok"
expect_in out1.log '^run [0-9a-f-]+ stored in attnprof.db' "the run is stored in ./attnprof.db"
expect_in out1.log 'Total Tests: [0-9]+' "./ci/test builds and finds the tests"
[ -f attnprof.db ] && ok "./attnprof.db is there" || bad "no ./attnprof.db"
echo "$fails failure(s)"
[ "$fails" = 0 ]
