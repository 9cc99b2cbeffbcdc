#!/usr/bin/env python3
"""How far a case's cost matrix is from its measured median, over a suite (default: the smoke suite).

For each case `attnprof run` stores the median of the timed samples and, from the traced pass,
the per-call CPU total of the matrix's outermost rows (`trace.call_cpu_ns`: for a kernel case,
the row of the `attnprof::<variant>` scope around each call). Their ratio is what a reader of
the matrix is asked to trust: the matrix should add up to what the call costs. This prints the
ratio per case and how many cases lie within --within (25% by default) of 1.

A benchmark, run on purpose (a smoke-suite run takes a minute or two), never by ctest:

  bench/cost_agreement.py --build build [--runs 3] [--within 0.25] [-- extra run arguments]

With --runs N the suite runs N times (each run times and traces every case anew) and the table
shows each case's ratio in every run, so run-to-run noise is visible beside the figure.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run_suite(build, db, extra):
    cmd = [os.path.join(build, "attnprof"), "run", "--db", db, *extra]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-4000:]}")


def ratios(build, db):
    """{case key: [matrix / median, per stored run in time order]}, and each case's status."""
    p = subprocess.run([os.path.join(build, "attnprof"), "export", "--db", db],
                       stdout=subprocess.PIPE, text=True, check=True)
    out, status = {}, {}
    for line in p.stdout.splitlines():
        obj = json.loads(line)
        run = obj.get("run")
        if not run:
            continue
        for c in run["cases"]:
            key = c["spec"]["key"]
            status[key] = c["status"]
            median = c["summary"].get("median_ns") or 0
            matrix = c.get("metrics", {}).get("trace.call_cpu_ns")
            if c["status"] != "ok" or median <= 0 or matrix is None:
                continue
            out.setdefault(key, []).append(matrix / median)
    return out, status


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="build folder with attnprof (default: build)")
    ap.add_argument("--runs", type=int, default=1, help="runs of the suite (default: 1)")
    ap.add_argument("--within", type=float, default=0.25,
                    help="agreement bound on |ratio - 1| (default: 0.25)")
    ap.add_argument("--db", help="history to write (default: a new file in a temporary folder)")
    ap.add_argument("extra", nargs="*", help="more `attnprof run` arguments, after --")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = a.db or os.path.join(tmp, "agreement.db")
        for _ in range(a.runs):
            run_suite(a.build, db, a.extra)
        per_case, status = ratios(a.build, db)
    if not per_case:
        sys.exit("no case has both a median and a traced matrix (was the run made with --no-trace?)")
    width = max(len(k) for k in per_case)
    print(f"{'case':<{width}}  matrix / median per run")
    inside = total = 0
    for key in sorted(per_case):
        rs = per_case[key]
        cells = "  ".join(f"{r:5.2f}{'' if abs(r - 1) <= a.within else '*'}" for r in rs)
        print(f"{key:<{width}}  {cells}")
        inside += sum(abs(r - 1) <= a.within for r in rs)
        total += len(rs)
    skipped = sorted(k for k, s in status.items() if k not in per_case)
    print(f"\n{inside} of {total} case runs within {a.within:.0%} of the median (* outside)")
    if skipped:
        print(f"not compared (not ok, or no matrix): {', '.join(skipped)}")


if __name__ == "__main__":
    main()
