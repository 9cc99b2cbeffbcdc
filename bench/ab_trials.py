#!/usr/bin/env python3
"""Judge the same measurements three ways: paired A/B, unpaired, and a naive rule.

Runs `attnprof ab` TRIALS times (the same build on both sides unless told otherwise), then
judges each trial's two stored runs again without the pairing:
  ab        the paired verdicts `attnprof ab` gave (per-round ratios, harness/gate/paired.h)
  file      `attnprof compare` of the head run against a baseline file written from the base
            run (`attnprof baseline update`): the unpaired gate with a committed baseline
  history   `attnprof compare --baseline history` of the head run against the base runs of the
            earlier trials (one median per run): the unpaired gate on main's history
  naive     "median ratio beyond the tolerance": what a hand-written CI check does
and prints, per way, the verdict counts over all cases and how many trials would pass (exit 0).
A benchmark, run on purpose (it takes minutes), never by ctest:

  bench/ab_trials.py --build build --trials 20 [--tolerance 5%] [-- extra ab arguments]

Everything is stored in --db (default: a new file in a temporary folder).
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd or None, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def counts(verdicts):
    return collections.Counter(v["verdict"] for v in verdicts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build folder with attnprof and attnprof-worker")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--tolerance", default="5%")
    ap.add_argument("--db", default="")
    ap.add_argument("extra", nargs="*", help="after --: more attnprof ab arguments")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    attnprof = os.path.join(build, "attnprof")
    work = tempfile.mkdtemp(prefix="attnprof-ab-trials-")
    db = os.path.abspath(a.db) if a.db else os.path.join(work, "trials.db")
    tol = float(a.tolerance.rstrip("%")) / (100 if a.tolerance.endswith("%") else 1)

    ways = {w: collections.Counter() for w in ("ab", "file", "history", "naive")}
    passed = collections.Counter()
    walls = []
    for t in range(a.trials):
        js = os.path.join(work, f"ab{t}.json")
        t0 = time.monotonic()
        rc, out = run([attnprof, "ab", "--base", build, "--db", db, "--tolerance", a.tolerance,
                       "--json", js, "--branch", "trials", "--commit", f"t{t}"] + a.extra, None)
        walls.append(time.monotonic() - t0)
        if not os.path.exists(js):
            print(out)
            sys.exit(f"trial {t}: attnprof ab exited {rc} without a report")
        rep = json.load(open(js))
        ways["ab"].update(counts(rep["verdicts"]))
        passed["ab"] += rc == 0
        # The report's layout: docs/report-json.md ("ab" holds the base side's run).
        base_run, head_run = rep["ab"]["base_run"]["id"], rep["run"]["id"]

        bl = os.path.join(work, f"base{t}.yaml")
        run([attnprof, "baseline", "update", "--db", db, "--run", base_run, "-o", bl], None)
        fj = os.path.join(work, f"file{t}.json")
        rc, out = run([attnprof, "compare", "--db", db, "--run", head_run, "--baseline", bl,
                       "--tolerance", a.tolerance, "--json", fj, "--no-record"], None)
        if os.path.exists(fj):
            ways["file"].update(counts(json.load(open(fj))["verdicts"]))
        passed["file"] += rc == 0

        hj = os.path.join(work, f"hist{t}.json")
        rc, out = run([attnprof, "compare", "--db", db, "--run", head_run, "--baseline", "history",
                       "--baseline-branch", "trials", "--tolerance", a.tolerance, "--json", hj,
                       "--no-record"], None)
        if t >= 3 and os.path.exists(hj):  # history needs a few earlier runs to say anything
            ways["history"].update(counts(json.load(open(hj))["verdicts"]))
            passed["history"] += rc == 0

        naive_fail = False
        for v in json.load(open(fj))["verdicts"] if os.path.exists(fj) else []:
            b, h = v.get("baseline_median_ns") or 0, v.get("candidate_median_ns") or 0
            if b > 0 and h > 0:
                r = h / b
                verdict = "regression" if r > 1 + tol else "improvement" if r < 1 - tol else "unchanged"
                ways["naive"][verdict] += 1
                naive_fail |= verdict == "regression"
        passed["naive"] += not naive_fail
        print(f"trial {t + 1}/{a.trials}: ab {dict(counts(rep['verdicts']))} in {walls[-1]:.1f} s",
              flush=True)

    print(f"\n{a.trials} trials, tolerance {a.tolerance}, database {db}")
    print(f"{'way':<8} {'trials passing':>15}  verdicts over all cases")
    for w, c in ways.items():
        n = a.trials - 3 if w == "history" else a.trials
        print(f"{w:<8} {passed[w]:>7} of {n:<5}  {dict(c)}")
    if walls:
        walls.sort()
        print(f"ab wall time per trial: median {walls[len(walls) // 2]:.1f} s, max {walls[-1]:.1f} s")


if __name__ == "__main__":
    main()
