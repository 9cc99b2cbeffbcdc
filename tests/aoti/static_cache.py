"""The package cache and a module whose export refuses dynamic dims (transformers' Llama eager
attention through repeat_kv, say): the package it makes holds one shape, so it is cached under
that shape's key. The same module for a second shape is made anew, never served the first
shape's package (which the run would then skip in every case: "input q dim 2 is 48; the package
was made for 32"); the first shape's comes back from the cache.

The export is a stand-in that does what export's fallback does (fixes every dim at the first
case's sizes) and writes the metadata a package carries, so this decides the cache's logic in a
second instead of two real exports' minutes. ci/aoti-package.py's real build is the one
tests/aoti/aoti.sh and own_module.sh run.
    python3 static_cache.py ci/aoti-package.py build/attnprof"""
import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import zipfile

script, attnprof = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("aoti_package", script)
ap = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ap)

made = []


def static_build(spec, inputs, cases, meta, out_path, log, module=None, static_key=None):
    inputs[:] = ap.static_inputs(inputs, cases)
    meta["inputs"] = inputs
    if static_key:
        meta["key"] = static_key
    with zipfile.ZipFile(out_path, "w") as z:
        z.writestr("model/wrapper_metadata.json", json.dumps({"attnprof": json.dumps(meta)}))
    made.append(cases[0]["q_len"])


ap.build = static_build
work = tempfile.mkdtemp(prefix="attnprof-static-cache-")
with open(os.path.join(work, "s.yaml"), "w") as f:
    f.write("""name: static
models:
  tiny: {heads: 2, head_dim: 16, hidden: 32, max_positions: 128}
model: tiny
hardware: {device: cpu}
workloads:
  - {name: short, phase: prefill, seq_len: 32, kernels: ["aoti:a.pt2"]}
  - {name: long, phase: prefill, seq_len: 48, kernels: ["aoti:b.pt2"]}
""")
packages = ap.collect(attnprof, os.path.join(work, "s.yaml"), None)
a, b = (os.path.join(work, n) for n in ("a.pt2", "b.pt2"))
said = []
args = argparse.Namespace(force=False, cache=os.path.join(work, "cache"))
os.makedirs(args.cache)
fails = 0


def check(what, ok):
    global fails
    print(("ok: " if ok else "FAIL: ") + what)
    fails += not ok


def q_len_of(path):
    return ap.package_metadata(path)["inputs"][0]["dims"][2]


ap.make_one(a, packages[a], None, "2.11.0", args, said.append)
check("the first shape's package is made", made == [32] and q_len_of(a) == 32)
ap.make_one(b, packages[b], None, "2.11.0", args, said.append)
check("the second shape's is made anew, not served the first's from the cache",
      made == [32, 48] and q_len_of(b) == 48)
ap.make_one(b, packages[b], None, "2.11.0", args, said.append)
check("the second is up to date", made == [32, 48] and said[-1].endswith("up to date"))
os.unlink(a)
ap.make_one(a, packages[a], None, "2.11.0", args, said.append)
check("the first comes back from the cache, its own shape",
      made == [32, 48] and "from the cache" in said[-1] and q_len_of(a) == 32)
# A user's package (attnprof package made it) is never replaced by attnprof's own module.
with zipfile.ZipFile(a, "w") as z:
    z.writestr("model/wrapper_metadata.json", json.dumps({"attnprof": json.dumps(
        {"script": "attnprof package", "module": "rope.py:Rope", "key": "x"})}))
try:
    ap.make_one(a, packages[a], None, "2.11.0", argparse.Namespace(force=True, cache=args.cache),
                said.append)
    check("ci/aoti-package.sh refuses a user's package", False)
except ap.Refused as e:
    check("ci/aoti-package.sh refuses a user's package, naming attnprof package",
          e.code == 2 and "attnprof package rope.py:Rope --scenario" in str(e))
check("... and leaves it as it was", ap.package_metadata(a)["module"] == "rope.py:Rope")


# One kernel name over two shapes whose module refuses dynamic dims: one package per shape
# beside c.pt2, indexed, each case loading its own. The stand-in refuses as export does.
def refusing_build(spec, inputs, cases, meta, out_path, log, module=None, static_key=None):
    if any(not isinstance(d, int) for i in inputs for d in i["dims"]):
        raise ap.NoDynamicDims("Constraints violated (seq)")
    static_build(spec, inputs, cases, meta, out_path, log, module, static_key)


ap.build = refusing_build
with open(os.path.join(work, "two.yaml"), "w") as f:
    f.write("""name: two
models:
  tiny: {heads: 2, head_dim: 16, hidden: 32, max_positions: 128}
model: tiny
hardware: {device: cpu}
workloads:
  - {name: both, phase: prefill, seq_len: [32, 48], kernels: ["aoti:c.pt2"]}
""")
c = os.path.join(work, "c.pt2")
two = ap.collect(attnprof, os.path.join(work, "two.yaml"), None)
made.clear()
ap.make_one(c, two[c], None, "2.11.0", args, said.append)
index = json.load(open(c + ".shapes.json"))
# Each shape's package is a.pt2's or b.pt2's, from the cache: the same module at the same shape.
check("two shapes, one package each from the cache, indexed beside c.pt2",
      made == [] and said[-3].endswith("kv32: from the cache (" + os.path.join(args.cache, index["keys"]["b1-q32-kv32"]) + ".pt2)")
      and index["shapes"] == {"b1-q32-kv32": "c.b1-q32-kv32.pt2",
                                                       "b1-q48-kv48": "c.b1-q48-kv48.pt2"})
check("each shape's package holds its shape",
      q_len_of(os.path.join(work, "c.b1-q32-kv32.pt2")) == 32
      and q_len_of(os.path.join(work, "c.b1-q48-kv48.pt2")) == 48 and q_len_of(c) == 32)
check("the output says so", "one package per shape" in said[-1] and "Constraints violated" in said[-1])
ap.make_one(c, two[c], None, "2.11.0", args, said.append)
check("a second call finds them up to date", made == [] and "up to date" in said[-1])
if "up to date" not in said[-1]:
    print(said[-4:])
# attnprof-worker loads each case's own file: the stand-ins carry no loadable model, so each
# case's error names the file it chose.
import subprocess

run = subprocess.run([attnprof, "run", os.path.join(work, "two.yaml"), "--db",
                      os.path.join(work, "h.db"), "--wide", "--no-trace"],
                     capture_output=True, text=True)
rows = {line.split()[0]: line for line in run.stdout.splitlines() if "/aoti:c.pt2" in line}
check("the seq 32 case loads c.b1-q32-kv32.pt2",
      any("s32" in k and "c.b1-q32-kv32.pt2" in v for k, v in rows.items()))
check("the seq 48 case loads c.b1-q48-kv48.pt2",
      any("s48" in k and "c.b1-q48-kv48.pt2" in v for k, v in rows.items()))
if fails:
    print(run.stdout, run.stderr)
print("\n".join(said))
shutil.rmtree(work)
sys.exit(1 if fails else 0)
