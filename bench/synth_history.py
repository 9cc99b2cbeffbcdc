#!/usr/bin/env python3
"""Synthetic attnprof histories from one real run: the fleet server's test and the CI-import
benchmark use them (tests/ci/postgres.sh, bench/ci_import.sh).

    synth_history.py TEMPLATE.jsonl --runs N --out FILE.jsonl [options]
    synth_history.py TEMPLATE.jsonl --runs N --tree DIR [--layout sliced|flat] [options]

TEMPLATE is an `attnprof export` of at least one run (its first run, with its verdicts, is
copied). Each run gets a fresh id (from --seed and --id-prefix), a commit, a start time an hour
after the last, and its cases' samples and summaries scaled by one factor within 2% of 1, so
that the runs differ in content as real runs do. Options:

  --branch B          the runs' branch (default main); --other-branch K: every K-th run is on
                      "feature" instead
  --envs K            spread the runs over K environments (device.name gets " #k"): each run's
                      fingerprint is one of K
  --pairs P           also P A/B pairs (base and head runs sharing a pair id, with rounds)
  --annotations A     also A annotations
  --start-ns T        the first run's start (default 2026-01-01)

--out writes one export holding everything; --tree writes the history branch's files, one per
run, under DIR: `flat` is the layout of history.sh before slices (history/<name>/<file>),
`sliced` the current one (history/<name>/<fingerprint>/<file>), names in time order either way.
"""
import argparse
import copy
import json
import os
import random
import uuid

sys_fields = ("git_commit", "git_branch", "started_ns", "ended_ns", "id")


def load_template(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    for rec in lines[1:]:
        if "run" in rec:
            return rec
    raise SystemExit(f"{path}: no run in this export")


def fingerprint(env):
    # core::Environment::fingerprint: FNV-1a 64 over "key=value\n" in key order, 16 hex digits.
    h = 1469598103934665603
    for k in sorted(env):
        for b in f"{k}={env[k]}\n".encode():
            h ^= b
            h = (h * 1099511628211) % (1 << 64)
    return f"{h:016x}"


def scaled_case(case, factor):
    c = copy.deepcopy(case)
    def scale(v):  # integers stay integers: the import reads them strictly
        return round(v * factor) if isinstance(v, int) else v * factor
    c["samples"]["ns"] = [scale(x) for x in c["samples"]["ns"]]
    for k, v in list(c["summary"].items()):
        if k.endswith("_ns") and isinstance(v, (int, float)) and not isinstance(v, bool):
            c["summary"][k] = scale(v)
    return c


def make_run(template, i, rng, args, env_k, branch, pair=None, side=""):
    rec = copy.deepcopy(template)
    run = rec["run"]
    run["id"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    if args.id_prefix:
        run["id"] = args.id_prefix + run["id"][len(args.id_prefix):]
    run["git_commit"] = f"{rng.getrandbits(160):040x}"
    run["git_branch"] = branch
    run["started_ns"] = args.start_ns + i * 3600 * 10**9
    run["ended_ns"] = run["started_ns"] + 10**9
    run["pair_id"] = pair or ""
    run["side"] = side
    if env_k:
        run["env"]["device.name"] = run["env"].get("device.name", "cpu") + f" #{env_k}"
    factor = 1 + rng.uniform(-0.02, 0.02)
    run["cases"] = [scaled_case(c, factor) for c in run["cases"]]
    for v in rec.get("verdicts", []):
        v["created_ns"] = run["ended_ns"]
    return rec


def rounds_for(pair, run, rng):
    key = run["cases"][0]["spec"]["key"]
    return {"ab_rounds": {"pair": pair, "rounds": [
        {"case": key, "round": r, "base_first": r % 2 == 0, "base_ns": 1000.0 + rng.random(),
         "head_ns": 1010.0 + rng.random(), "base_n": 5, "head_n": 5,
         "at_ns": run["started_ns"] + r, "pass": 0} for r in range(6)]}}


def generate(template, args):
    rng = random.Random(args.seed)
    runs, extra = [], []
    for i in range(args.runs):
        branch = "feature" if args.other_branch and i % args.other_branch == 1 else args.branch
        runs.append(make_run(template, i, rng, args, i % args.envs, branch))
    for p in range(args.pairs):
        pair = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        sides = [make_run(template, args.runs + p, rng, args, 0, args.branch, pair, s)
                 for s in ("base", "head")]
        runs += sides
        extra.append(rounds_for(pair, sides[0]["run"], rng))
    for a in range(args.annotations):
        extra.append({"annotation": {"kind": "accept", "case_glob": "*", "run": runs[a]["run"]["id"],
                                     "branch": args.branch, "env": "", "reason": f"synthetic {a}",
                                     "author": "synth", "created_ns": args.start_ns + a}})
    return runs, extra


def write_tree(runs, extra, args):
    header = json.dumps({"format": "attnprof-history", "version": 2})
    for n, rec in enumerate(runs):
        run = rec["run"]
        stamp = f"{run['started_ns'] // 10**9:012d}"
        name = f"{stamp}-{run['git_commit'][:12]}-{n}-1.jsonl"
        parts = [args.tree, "history", args.name]
        if args.layout == "sliced":
            parts.append(fingerprint(run["env"]))
        os.makedirs(os.path.join(*parts), exist_ok=True)
        with open(os.path.join(*parts, name), "w") as f:
            f.write(header + "\n" + json.dumps(rec) + "\n")
    if extra:
        with open(os.path.join(args.tree, "history", args.name, "extra.jsonl"), "w") as f:
            f.write(header + "\n" + "".join(json.dumps(e) + "\n" for e in extra))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("template")
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--id-prefix", default="")
    ap.add_argument("--branch", default="main")
    ap.add_argument("--other-branch", type=int, default=0)
    ap.add_argument("--envs", type=int, default=1)
    ap.add_argument("--pairs", type=int, default=0)
    ap.add_argument("--annotations", type=int, default=0)
    ap.add_argument("--start-ns", type=int, default=1767225600 * 10**9)
    ap.add_argument("--out")
    ap.add_argument("--tree")
    ap.add_argument("--layout", choices=("sliced", "flat"), default="sliced")
    ap.add_argument("--name", default="smoke")
    args = ap.parse_args()
    if bool(args.out) == bool(args.tree):
        ap.error("give one of --out and --tree")
    runs, extra = generate(load_template(args.template), args)
    if args.tree:
        write_tree(runs, extra, args)
        return
    with open(args.out, "w") as f:
        f.write(json.dumps({"format": "attnprof-history", "version": 2}) + "\n")
        for rec in runs + extra:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
