#!/usr/bin/env python3
"""The OpenMP wait policy of `attnprof run`: the smoke suite's medians with and without a CPU hog,
under OpenMP's own default (what `run` did before) and OMP_WAIT_POLICY=PASSIVE (what it does now,
worker/wait_policy.h), paired in time.

Each round runs the four configurations once, in a shuffled order, so that whatever else the
machine does falls on all four alike:

  default   the worker started without OMP_WAIT_POLICY (a wrapper unsets it before exec):
            libgomp's threads spin at a barrier for a while, then sleep
  passive   attnprof's rule: OMP_WAIT_POLICY=PASSIVE, threads sleep at once
  +hog      --hog busy processes (2) beside the run, on the same CPUs

It prints, per case, the median over rounds of each configuration's run median, the ratios that
decide the choice (hog over no hog under each policy, passive over default without a hog), and
how many cases each configuration flagged unstable (core/stability.h), and the same samples
judged by both of its rules (the run-queue wait, and the CPU-time rule of samples stored before
schema v9), so a rule's false flags on the quiet configurations show. A benchmark, run on
purpose (minutes), never by ctest:

  bench/wait_policy.py --rounds 3
  bench/wait_policy.py --rounds 2 --case 'bert-base/prefill/*/eager'
"""
import argparse
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = ["default", "passive", "default+hog", "passive+hog"]


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def run_once(args, config, db, wrapper):
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    cmd = [args.attnprof, "run", "--db", db, "--no-trace"]
    for c in args.case:
        cmd += ["--case", c]
    if config.startswith("default"):
        cmd += ["--worker", wrapper]
    hogs = []
    if config.endswith("+hog"):
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(args.hog)]
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True).stdout
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    m = re.search(r"^run (\S+) stored in", out, re.M)
    if not m:
        sys.exit("attnprof run printed no run id:\n" + out)
    return m.group(1)


def medians(db, run_id):
    """{case key: (median ns, unstable)} of one run."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT c.case_key, s.median_ns, "
        "(SELECT value FROM metrics m WHERE m.case_id = c.id AND m.name = 'measure.descheduled'), "
        "json_extract(c.params, '$.measure.max_descheduled') "
        "FROM cases c JOIN summaries s ON s.case_id = c.id WHERE c.run_id = ? AND s.n > 0",
        (run_id,)).fetchall()
    con.close()
    return {k: (m, d is not None and d > (t if t is not None else 0.10)) for k, m, d, t in rows}


def rule_flags(db, run_id):
    """{case key: (unstable by the run-queue wait, unstable by the CPU-time rule before schema
    v9)}: both rules of core/stability.h applied to the same stored samples."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT c.case_key, json_extract(c.params, '$.hardware.threads'), "
        "json_extract(c.params, '$.measure.max_descheduled'), s.ns, s.cpu_ns, s.invol_switches, "
        "s.wait_ns FROM cases c JOIN samples s ON s.case_id = c.id WHERE c.run_id = ?",
        (run_id,)).fetchall()
    con.close()
    per = {}
    for key, threads, limit, ns, cpu, invol, wait in rows:
        e = per.setdefault(key, [limit if limit is not None else 0.10, 0, 0, 0])
        if wait is None and (cpu is None or invol is None):
            continue
        e[1] += 1
        e[2] += wait is not None and wait > 0.10 * ns
        e[3] += (cpu is not None and invol is not None and invol >= 1
                 and cpu < 0.9 * max(1, threads or 1) * ns)
    return {k: (w / n > lim, c / n > lim) for k, (lim, n, w, c) in per.items() if n}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--attnprof", default=os.path.join(HERE, "..", "build", "attnprof"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--hog", type=int, default=2, help="busy processes beside a +hog run")
    p.add_argument("--case", action="append", default=[], help="only cases matching this glob")
    p.add_argument("--seed", type=int, default=27)
    args = p.parse_args()
    worker = os.path.join(os.path.dirname(os.path.abspath(args.attnprof)), "attnprof-worker")
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        wrapper = os.path.join(tmp, "worker-default-policy")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nunset OMP_WAIT_POLICY\nexec "%s" "$@"\n' % worker)
        os.chmod(wrapper, 0o755)
        db = os.path.join(tmp, "h.db")
        got = {c: [] for c in CONFIGS}
        rules = {c: [] for c in CONFIGS}
        loads = []
        for r in range(args.rounds):
            order = CONFIGS[:]
            rng.shuffle(order)
            for config in order:
                loads.append(loadavg())
                run_id = run_once(args, config, db, wrapper)
                got[config].append(medians(db, run_id))
                rules[config].append(rule_flags(db, run_id))
            print("round %d of %d done (load %.1f)" % (r + 1, args.rounds, loadavg()),
                  file=sys.stderr)
    keys = sorted(set().union(*[set(m) for runs in got.values() for m in runs]))

    def med(config, key):
        v = [m[key][0] for m in got[config] if key in m]
        return statistics.median(v) if v else float("nan")

    def flagged(config):
        return sum(1 for m in got[config] for k in m if m[k][1])

    print("smoke suite, %d round(s), each configuration once a round in shuffled order; "
          "load average at the runs' starts %.1f-%.1f on %d CPUs\n"
          % (args.rounds, min(loads), max(loads), os.cpu_count()))
    print("| case | default | passive | default+hog | passive+hog | hog/none default | "
          "hog/none passive | passive/default |")
    print("|---|---|---|---|---|---|---|---|")
    for k in keys:
        d, pa, dh, ph = (med(c, k) for c in CONFIGS)
        print("| %s | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.2f | %.2f | %.2f |"
              % (k, d / 1e6, pa / 1e6, dh / 1e6, ph / 1e6, dh / d, ph / pa, pa / d))
    total = sum(len(m) for m in got["default"])
    print("\nunstable cases (of %d per configuration over the rounds): %s"
          % (total, ", ".join("%s %d" % (c, flagged(c)) for c in CONFIGS)))
    by_rule = lambda c, i: sum(1 for m in rules[c] for k in m if m[k][i])
    print("the same samples by each rule: run-queue wait (now) %s; CPU time short of wall x "
          "threads with a switch (before schema v9) %s"
          % (", ".join("%s %d" % (c, by_rule(c, 0)) for c in CONFIGS),
             ", ".join("%s %d" % (c, by_rule(c, 1)) for c in CONFIGS)))


if __name__ == "__main__":
    main()
