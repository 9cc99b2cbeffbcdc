#!/usr/bin/env python3
"""Synthetic attnprof histories from one real run: the fleet server's test and the CI-import
benchmark use them (tests/ci/postgres.sh, bench/ci_import.sh).

    synth_history.py TEMPLATE.jsonl --runs N --out FILE.jsonl [options]
    synth_history.py TEMPLATE.jsonl --runs N --tree DIR | --git-stream [--layout sliced|flat] ...

TEMPLATE is an `attnprof export` of at least one run (its first run, with its verdicts, is
copied). Each run gets a fresh id (from --seed and --id-prefix), a commit, a start time an hour
after the last, and the template's cases with samples and summaries scaled by one of 8
factors within 2% of 1. Options:

  --branch B          the runs' branch (default main); --other-branch K: every K-th run is on
                      "feature" instead
  --envs K            spread the runs over K environments (device.name gets " #k"): each run's
                      fingerprint is one of K
  --pairs P           also P A/B pairs (base and head runs sharing a pair id, with rounds)
  --annotations A     also A annotations
  --start-ns T        the first run's start (default 2026-01-01)
  --no-cost           drop the cases' cost rows (a sixth of the size: large histories)
  --quiet K           as if measured on a quiet machine: each case keeps its first K samples
                      (a quiet machine converges in few; a template measured on a busy one may
                      hold max_samples) and measure.descheduled 0 (else every synthetic run is
                      unstable, and `compare --baseline history` leaves those out)

--out writes one export holding everything; --tree writes the history branch's files, one per
run, under DIR, and --git-stream the same as a `git fast-import` stream (one commit on
refs/heads/attnprof-history): `flat` is the layout of history.sh before slices
(history/<name>/<file>), `sliced` the current one (history/<name>/<fingerprint>/<file>), names
beginning with the run's time either way.
"""
import argparse
import copy
import json
import os
import random
import sys
import time
import uuid

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


def scaled_cases(cases, factor, no_cost, quiet):
    def scale(v):  # integers stay integers: the import reads them strictly
        return round(v * factor) if isinstance(v, int) else v * factor
    out = copy.deepcopy(cases)
    for c in out:
        c["samples"]["ns"] = [scale(x) for x in c["samples"]["ns"]]
        for k, v in list(c["summary"].items()):
            if k.endswith("_ns") and isinstance(v, (int, float)) and not isinstance(v, bool):
                c["summary"][k] = scale(v)
        if no_cost:
            c["cost"] = []
        if quiet:
            c["samples"] = {k: v[:quiet] for k, v in c["samples"].items()}
            c["summary"]["n"] = min(c["summary"].get("n", quiet), quiet)
            if "measure.descheduled" in c.get("metrics", {}):
                c["metrics"]["measure.descheduled"] = 0.0
    return out


class Runs:
    """Run records from the template. The cases come in 8 scalings (factors within 2% of 1),
    each serialized once: a hundred thousand runs are then a matter of seconds."""

    def __init__(self, template, args):
        self.template, self.args = template, args
        rng = random.Random(args.seed ^ 0x5eed)
        cases = template["run"]["cases"]
        self.cases = [json.dumps(scaled_cases(cases, 1 + rng.uniform(-0.02, 0.02), args.no_cost,
                                                args.quiet))
                      for _ in range(8)]

    def make(self, i, rng, env_k, branch, pair=None, side=""):
        run = {k: v for k, v in self.template["run"].items() if k != "cases"}
        run["id"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if self.args.id_prefix:
            run["id"] = self.args.id_prefix + run["id"][len(self.args.id_prefix):]
        run["git_commit"] = f"{rng.getrandbits(160):040x}"
        run["git_branch"] = branch
        run["started_ns"] = self.args.start_ns + i * 3600 * 10**9
        run["ended_ns"] = run["started_ns"] + 10**9
        run["pair_id"] = pair or ""
        run["side"] = side
        run["env"] = dict(run["env"])
        if env_k:
            run["env"]["device.name"] = run["env"].get("device.name", "cpu") + f" #{env_k}"
        verdicts = [dict(v, created_ns=run["ended_ns"]) for v in self.template.get("verdicts", [])]
        head = json.dumps(run)
        line = ('{"run": ' + head[:-1] + ', "cases": ' + self.cases[rng.randrange(8)] + "}"
                + (', "verdicts": ' + json.dumps(verdicts) if verdicts else "") + "}")
        return run, line


def rounds_for(pair, run, rng):
    key = run["cases"][0]["spec"]["key"]
    return {"ab_rounds": {"pair": pair, "rounds": [
        {"case": key, "round": r, "base_first": r % 2 == 0, "base_ns": 1000.0 + rng.random(),
         "head_ns": 1010.0 + rng.random(), "base_n": 5, "head_n": 5,
         "at_ns": run["started_ns"] + r, "pass": 0} for r in range(6)]}}


def generate(template, args):
    """(run, line) for each run, and the other lines (rounds, annotations)."""
    rng = random.Random(args.seed)
    maker = Runs(template, args)
    runs, extra = [], []
    for i in range(args.runs):
        branch = "feature" if args.other_branch and i % args.other_branch == 1 else args.branch
        runs.append(maker.make(i, rng, i % args.envs, branch))
    for p in range(args.pairs):
        pair = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        sides = [maker.make(args.runs + p, rng, 0, args.branch, pair, s) for s in ("base", "head")]
        runs += sides
        extra.append(rounds_for(pair, json.loads(sides[0][1])["run"], rng))
    for a in range(args.annotations):
        extra.append({"annotation": {"kind": "accept", "case_glob": "*", "run": runs[a][0]["id"],
                                     "branch": args.branch, "env": "", "reason": f"synthetic {a}",
                                     "author": "synth", "created_ns": args.start_ns + a}})
    return runs, extra


HEADER = json.dumps({"format": "attnprof-history", "version": 2}) + "\n"


def tree_files(runs, extra, args):
    """(path, text) of each file on the history branch."""
    for n, (run, line) in enumerate(runs):
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(run["started_ns"] // 10**9))
        parts = ["history", args.name]
        if args.layout == "sliced":
            parts.append(fingerprint(run["env"]))
        yield "/".join(parts + [f"{stamp}-{run['git_commit']}-{n}-1.jsonl"]), HEADER + line + "\n"
    if extra:
        yield f"history/{args.name}/extra.jsonl", HEADER + "".join(json.dumps(e) + "\n" for e in extra)


def write_tree(runs, extra, args):
    for path, text in tree_files(runs, extra, args):
        full = os.path.join(args.tree, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


def write_git_stream(runs, extra, args):
    """A `git fast-import` stream: one commit on refs/heads/attnprof-history holding the tree."""
    out = sys.stdout.buffer
    paths = []
    for n, (path, text) in enumerate(tree_files(runs, extra, args), start=1):
        data = text.encode()
        out.write(b"blob\nmark :%d\ndata %d\n" % (n, len(data)) + data + b"\n")
        paths.append((n, path))
    msg = b"synthetic history"
    out.write(b"commit refs/heads/attnprof-history\ncommitter synth <synth@example.com> 0 +0000\n")
    out.write(b"data %d\n%s\n" % (len(msg), msg))
    for n, path in paths:
        out.write(b"M 100644 :%d %s\n" % (n, path.encode()))
    out.write(b"\n")


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
    ap.add_argument("--no-cost", action="store_true")
    ap.add_argument("--quiet", type=int, default=0)
    ap.add_argument("--out")
    ap.add_argument("--tree")
    ap.add_argument("--git-stream", action="store_true")
    ap.add_argument("--layout", choices=("sliced", "flat"), default="sliced")
    ap.add_argument("--name", default="smoke")
    args = ap.parse_args()
    if sum(map(bool, (args.out, args.tree, args.git_stream))) != 1:
        ap.error("give one of --out, --tree and --git-stream")
    runs, extra = generate(load_template(args.template), args)
    if args.tree:
        write_tree(runs, extra, args)
    elif args.git_stream:
        write_git_stream(runs, extra, args)
    else:
        with open(args.out, "w") as f:
            f.write(HEADER + "".join(line + "\n" for _, line in runs)
                    + "".join(json.dumps(e) + "\n" for e in extra))


if __name__ == "__main__":
    main()
