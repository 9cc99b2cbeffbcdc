#!/usr/bin/env bash
# attnprof export --format bmf|gab|otava|pytorch read by the tools they are for. A history of 24
# runs of two cases is planted (from the corpus export's run: no worker needed): one case's median
# steps up 30% at run 12, the other's stays flat. Apache Otava (the venv ci/setup.sh installs
# with ATTNPROF_SETUP_TESTS=1) analyses the otava export, and its change points must be those of
# `attnprof changes` on the same history: the step, at the same commit, and nothing else. The
# one-run formats go through export_check.py, the consumers' published schemas and code as
# rules, which must also refuse broken files. Bad options exit 2 naming the option.
#   exports.sh BUILD_DIR
set -uo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: exports.sh BUILD_DIR}" && pwd)"
attnprof="$build/attnprof"
check="$src/tests/ci/export_check.py"
# shellcheck source=tests/lib/checks.sh
source "$src/tests/lib/checks.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

echo "== a planted history: 24 runs, case step/... +30% from run 12, case flat/... flat"
python3 - "$src/tests/data/store-corpus/export.jsonl" >planted.jsonl <<'PY'
import copy, json, random, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
template = next(l["run"] for l in lines if "run" in l)
case = template["cases"][0]
rng = random.Random(7)
print(json.dumps({"format": "attnprof-history", "version": 1}))
for i in range(24):
    run = copy.deepcopy(template)
    run["id"] = f"00000000-0000-4000-8000-{i:012d}"
    run["git_commit"] = f"{i:02d}" + "c" * 38
    run["started_ns"] = 1767225600 * 10**9 + i * 3600 * 10**9
    run["ended_ns"] = run["started_ns"] + 10**9
    run["cases"] = []
    for key, base in (("step/prefill/b1/cpu.naive", 1000.0 if i < 12 else 1300.0),
                      ("flat/prefill/b1/cpu.naive", 500.0)):
        c = copy.deepcopy(case)
        c["spec"]["key"] = key
        m = base * (1 + rng.uniform(-0.01, 0.01))  # 1% noise, as a quiet machine's medians
        c["samples"]["ns"] = [round(m * 0.99), round(m * 1.01)]
        c["summary"].update(median_ns=m, mean_ns=m, min_ns=m * 0.99, max_ns=m * 1.01,
                            q1_ns=m * 0.995, q3_ns=m * 1.005, ci_low_ns=m * 0.99,
                            ci_high_ns=m * 1.01)
        run["cases"].append(c)
    print(json.dumps({"run": run}))
PY
"$attnprof" import --db h.db planted.jsonl >/dev/null 2>&1 || { bad "import the planted history"; exit 1; }
step_commit="12$(printf 'c%.0s' {1..38})"

echo "== attnprof changes: the step, and nothing else"
"$attnprof" changes --db h.db --format json >changes.json
python3 - changes.json "$step_commit" <<'PY' && ok "attnprof changes finds the step" || bad "attnprof changes"
import json, sys
got = [(c["case"], c["commit_after"]) for c in json.load(open(sys.argv[1]))]
want = [("step/prefill/b1/cpu.naive", sys.argv[2])]
print("attnprof changes:", got)
sys.exit(got != want)
PY

echo "== otava: the export, its configuration, and Otava's change points"
expect "otava export" 0 "exported 24 runs of 2 cases as otava" -- \
  "$attnprof" export --db h.db --format otava -o h.csv --otava-config otava.yaml
head -c 300 h.csv; echo
otava="${ATTNPROF_HOME:-$HOME/.cache/attnprof}/otava/bin/otava"
if [ ! -x "$otava" ]; then
  echo "SKIPPED: no Apache Otava at $otava (ATTNPROF_SETUP_TESTS=1 ci/setup.sh installs it from" \
       "PyPI); the otava export is not fed to Otava"
  otava_skipped=1
else
  otava_skipped=0
  if OTAVA_CONFIG=otava.yaml "$otava" analyze attnprof --output json >otava.json 2>otava.log; then
    python3 - otava.json changes.json <<'PY' && ok "Otava's change points are attnprof's" \
      || bad "Otava and attnprof changes disagree"
import json, sys
otava = json.load(open(sys.argv[1]))["attnprof"]
theirs = sorted((c["metric"], point["attributes"]["commit"])
                for point in otava for c in point["changes"])
ours = sorted((c["case"], c["commit_after"]) for c in json.load(open(sys.argv[2])))
print("Otava:", theirs)
print("attnprof changes:", ours)
sys.exit(not ours or theirs != ours)
PY
  else
    bad "otava analyze failed:"; cat otava.log
  fi
fi

echo "== bmf, gab, pytorch: the newest run, as each consumer reads it"
for f in bmf gab pytorch; do
  expect "$f export" 0 "exported run 00000000-0000-4000-8000-000000000023 \(2 cases\) as $f" -- \
    "$attnprof" export --db h.db --format "$f" -o "out.$f.json"
  expect "$f accepted" 0 "accepted as $f" -- python3 "$check" "$f" "out.$f.json"
done
python3 - out.bmf.json out.gab.json out.pytorch.json <<'PY' && ok "the exports carry the run's medians" || bad "the exports' figures"
import json, sys
bmf, gab, pt = (json.load(open(p)) for p in sys.argv[1:])
step = bmf["step/prefill/b1/cpu.naive"]["latency"]
assert 1287 <= step["value"] <= 1313, step  # the run after the step
assert step["lower_value"] < step["value"] < step["upper_value"], step
assert {b["name"]: b["value"] for b in gab}["step/prefill/b1/cpu.naive"] == step["value"]
assert {r["benchmark"]["extra_info"]["case"]: r["metric"]["benchmark_values"][0]
        for r in pt}["step/prefill/b1/cpu.naive"] == step["value"]
PY
expect "an older run by --run" 0 "as bmf" -- \
  "$attnprof" export --db h.db --format bmf --run 00000000-0000-4000-8000-000000000003 -o old.json
python3 -c 'import json,sys; v=json.load(open("old.json"))["step/prefill/b1/cpu.naive"]["latency"]["value"]; sys.exit(not 990 <= v <= 1010)' \
  && ok "--run picks that run" || bad "--run did not pick run 3"

echo "== the checker refuses what the consumers refuse"
python3 - <<'PY'
import json
bad = {
    "bmf": {"k": {"latency": {"value": "1000"}}},
    "gab": [{"name": "k", "value": 1.0}],
    "pytorch": [{"benchmark": {"name": "b"}, "model": {"name": "m"},
                 "metric": {"name": "x", "benchmark_values": [1.0], "extra_info": {"n": 5}}}],
}
for f, doc in bad.items():
    json.dump(doc, open(f"bad.{f}.json", "w"))
PY
expect "bmf: a string value refused" 1 "latency.value: want a number" -- \
  python3 "$check" bmf bad.bmf.json
expect "gab: an entry without a unit refused" 1 "unit: want a non-empty string" -- \
  python3 "$check" gab bad.gab.json
expect "pytorch: a number in a Map(String, String) refused" 1 "extra_info.n: a Map" -- \
  python3 "$check" pytorch bad.pytorch.json

echo "== bad input names the option (exit 2)"
expect "an unknown format" 2 'unknown format "csv" \(want jsonl, bmf, gab, otava or pytorch\)' -- \
  "$attnprof" export --db h.db --format csv
expect "--run with otava" 2 "--run: applies to --format bmf, gab or pytorch only, not otava" -- \
  "$attnprof" export --db h.db --format otava --run latest
expect "a run that is not there" 2 "--run: no run nope" -- \
  "$attnprof" export --db h.db --format gab --run nope
expect "--otava-config without --output" 2 "--otava-config: names the CSV file" -- \
  "$attnprof" export --db h.db --format otava --otava-config o.yaml
expect "no run in the window" 2 "no complete run matches the filters" -- \
  "$attnprof" export --db h.db --format bmf --since 2030-01-01

echo "$fails failure(s)"
[ "$fails" = 0 ] || exit 1
[ "$otava_skipped" = 0 ] || exit 77
