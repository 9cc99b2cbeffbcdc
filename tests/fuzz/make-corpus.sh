#!/usr/bin/env bash
# Makes tests/data/store-corpus, the seeds of ci/fuzz-store.sh: a small sound history (two runs
# from the v1 fixture, an A/B pair, an annotation, verdicts; 1 KiB pages so that each file is a
# few dozen KiB), and copies damaged the ways the reliability campaign of issue 37 found: a
# params or kernels column that is not JSON or not the shape, an annotation kind outside its
# CHECK, an environment's fields damaged, a run id in its row differing from its index entry, a
# newer and a negative schema version, a truncated file, a zeroed page; and exports, whole and
# with a run missing a required field. Run again only to change the seeds (then commit them).
#   tests/fuzz/make-corpus.sh BUILD_DIR       (BUILD_DIR holds the attnprof executable)
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
attnprof="$(cd "${1:?usage: make-corpus.sh BUILD_DIR}" && pwd)/attnprof"
out="$src/tests/data/store-corpus"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$src/tests/data/db/v1.db" "$tmp/v1.db"
"$attnprof" export --db "$tmp/v1.db" -o "$tmp/template.jsonl" 2>/dev/null
python3 "$src/bench/synth_history.py" "$tmp/template.jsonl" --runs 2 --pairs 1 --annotations 1 \
  --seed 37 --out "$tmp/sound.jsonl"
"$attnprof" import --db "$tmp/sound.db" "$tmp/sound.jsonl" >/dev/null
rm -rf "$out"
mkdir -p "$out"
python3 - "$tmp/sound.db" "$out" "$tmp/sound.jsonl" <<'PY'
import json, os, shutil, sqlite3, sys
sound, out, export = sys.argv[1:]
db = sqlite3.connect(sound)
db.execute("PRAGMA journal_mode = DELETE")
db.execute("PRAGMA page_size = 1024")
db.execute("VACUUM")
db.close()

def variant(name, sql=None, edit=None):
    path = os.path.join(out, name + ".sqlite")
    shutil.copy(sound, path)
    if sql:
        c = sqlite3.connect(path)
        c.execute("PRAGMA ignore_check_constraints = ON")
        c.executescript(sql)
        c.commit()
        c.close()
    if edit:
        data = bytearray(open(path, "rb").read())
        edit(data, path)
        open(path, "wb").write(bytes(data))

def run_id_in_row(data, path):
    c = sqlite3.connect(path)
    page = c.execute("PRAGMA page_size").fetchone()[0]
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").fetchone()[0]
    rid = c.execute("SELECT id FROM runs ORDER BY started_ns DESC LIMIT 1").fetchone()[0]
    c.close()
    at = data.find(rid.encode(), (root - 1) * page, root * page)
    data[at + len(rid) - 1] ^= 1

def zero_page(data, path):
    data[len(data) // 2 // 1024 * 1024:][:1024] = bytes(1024)

variant("sound")
variant("params-not-json", "UPDATE cases SET params = '{bad' WHERE id = (SELECT min(id) FROM cases)")
variant("params-shape", "UPDATE cases SET params = '{\"batch\": \"two\"}'")
variant("kernels-not-json", "UPDATE cases SET kernels = '[\"a\",' ")
variant("cost-kernels-shape", "UPDATE cost_rows SET kernels = '{\"a\":1}'")
variant("annotation-kind", "UPDATE annotations SET kind = 'bogus'")
variant("environment-fields", "UPDATE environments SET fields = '[1,2'")
variant("case-status", "UPDATE cases SET status = 'weird'")
variant("sample-text", "UPDATE samples SET ns = 'x'")
variant("run-id-in-row", edit=run_id_in_row)
variant("version-newer", "PRAGMA user_version = 99")
variant("version-negative", "PRAGMA user_version = -1")
variant("truncated", edit=lambda d, p: d.__delitem__(slice(len(d) // 2, None)))
variant("page-zeroed", edit=zero_page)
lines = open(export).read().splitlines()
open(os.path.join(out, "export.jsonl"), "w").write("\n".join(lines) + "\n")
first = next(i for i, l in enumerate(lines) if l.startswith('{"run"'))
rec = json.loads(lines[first])
del rec["run"]["started_ns"]
lines[first] = json.dumps(rec)
open(os.path.join(out, "export-missing-field.jsonl"), "w").write("\n".join(lines) + "\n")
PY
ls -la "$out" | awk '{print $5, $9}'
