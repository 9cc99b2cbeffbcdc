#!/usr/bin/env python3
"""Calibration of the busy-machine rule (core/stability.h): how often it flags a case on a quiet
machine, and whether it flags every case a CPU hog moved.

Each round runs the suite (the built-in smoke suite unless --scenario) once alone and once
beside --hog busy processes (2), in a shuffled order, into one history. Per run and case it reads
what the worker stored: the share of descheduled samples (measure.descheduled) and how far they
moved the median in half-widths of its interval (measure.descheduled_shift), and applies both
rules to the same figures:

  share rule (before)  unstable when more than 10% of the samples were descheduled
  shift rule (now)     unstable when the shift exceeds 1 (the median without the descheduled
                       samples lies outside the interval) or more than half were descheduled

A run counts as quiet only when the machine's other tasks took less than --quiet-cpus (0.1) CPUs
while it ran (/proc/stat's busy time less this campaign's own and its children's); runs beside
the hog are judged against the truth of what it did: a case is affected when the median of its
quiet runs lies outside the hog run's own median interval and its median moved more than
--affected (5%) from it (the figure is not the kernel's). It
prints the quiet false-flag rate of each rule (with its 95% Wilson interval), the share of
affected cases each rule flagged, and the load the runs saw. A benchmark, run on purpose
(minutes per round), never by ctest:

  bench/busy_rule.py --rounds 8
  bench/busy_rule.py --rounds 4 --case 'bert-base/prefill/*' --out campaign.json
  bench/busy_rule.py --tabulate campaign.json other-campaign.json
"""
import argparse
import json
import math
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHARE_RULE = 0.10  # the rule before: more than a tenth of the samples descheduled
HALF = 0.50  # measure.max_descheduled's default
MAX_SHIFT = 1.0  # measure.max_descheduled_shift's default


def busy_s():
    with open("/proc/stat") as f:
        v = [float(x) for x in f.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = v
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_s():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def run_once(args, hog, db):
    cmd = [args.attnprof, "run", "--db", db, "--no-trace"]
    if args.scenario:
        cmd.insert(2, args.scenario)
    for c in args.case:
        cmd += ["--case", c]
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(args.hog if hog else 0)]
    b0, o0, t0, load = busy_s(), own_s(), time.monotonic(), loadavg()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    wall = time.monotonic() - t0
    # The hog's CPU is the campaign's children's: only other tasks' time counts as others'.
    others = ((busy_s() - b0) - (own_s() - o0)) / wall
    m = re.search(r"^run (\S+) stored in", out, re.M)
    if not m:
        sys.exit("attnprof run printed no run id:\n" + out)
    return m.group(1), others, load


def figures(db, run_id):
    """{case key: (median, ci_low, ci_high, share, shift or None)} of one run's cases."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT c.case_key, s.median_ns, s.ci_low_ns, s.ci_high_ns, "
        "(SELECT value FROM metrics m WHERE m.case_id = c.id AND m.name = 'measure.descheduled'), "
        "(SELECT value FROM metrics m WHERE m.case_id = c.id "
        " AND m.name = 'measure.descheduled_shift') "
        "FROM cases c JOIN summaries s ON s.case_id = c.id WHERE c.run_id = ? AND s.n > 0",
        (run_id,)).fetchall()
    con.close()
    return {k: (m, lo, hi, d if d is not None else 0.0, sh) for k, m, lo, hi, d, sh in rows}


def share_rule(f):
    return f[3] > SHARE_RULE


def shift_rule(f):
    share, shift = f[3], f[4]
    return share > HALF or (shift is not None and abs(shift) > MAX_SHIFT)


def wilson(k, n):
    """95% Wilson interval of k successes in n."""
    if n == 0:
        return (float("nan"), float("nan"))
    z, p = 1.96, k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, c - h), min(1.0, c + h))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--attnprof", default=os.path.join(HERE, "..", "build", "attnprof"))
    p.add_argument("--scenario", help="a scenario file; default: the built-in smoke suite")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--hog", type=int, default=2, help="busy processes beside a hog run")
    p.add_argument("--case", action="append", default=[], help="only cases matching this glob")
    p.add_argument("--quiet-cpus", type=float, default=0.1,
                   help="a run is quiet when others took fewer CPUs than this meanwhile")
    p.add_argument("--affected", type=float, default=0.05,
                   help="beside the hog, a case is affected when its median moved more than this")
    p.add_argument("--seed", type=int, default=39)
    p.add_argument("--out", help="write every run's figures here as JSON")
    p.add_argument("--tabulate", nargs="+",
                   help="print the figures of earlier campaigns' --out files, pooled")
    args = p.parse_args()
    rng = random.Random(args.seed)
    runs = []  # {"hog": bool, "others": CPUs, "load": load1, "cases": {key: figures}}
    for path in args.tabulate or []:
        with open(path) as f:
            runs += json.load(f)
        args.rounds = sum(not r["hog"] for r in runs)
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "h.db")
        for r in range(0 if args.tabulate else args.rounds):
            order = [False, True]
            rng.shuffle(order)
            for hog in order:
                run_id, others, load = run_once(args, hog, db)
                runs.append({"hog": hog, "others": others, "load": load,
                             "cases": figures(db, run_id)})
            print("round %d of %d done (load %.1f)" % (r + 1, args.rounds, loadavg()),
                  file=sys.stderr)
            if args.out:  # after every round: a campaign cut short keeps what it measured
                with open(args.out, "w") as f:
                    json.dump(runs, f)
    quiet = [r for r in runs if not r["hog"] and r["others"] < args.quiet_cpus]
    alone = [r for r in runs if not r["hog"]]
    hogged = [r for r in runs if r["hog"]]
    print("%d round(s); load average at the runs' starts %.1f-%.1f on %d CPUs; other tasks took "
          "%.2f-%.2f CPUs during the runs without the hog; %d of %d such runs quiet (< %.2f CPUs)"
          % (args.rounds, min(r["load"] for r in runs), max(r["load"] for r in runs),
             os.cpu_count(), min(r["others"] for r in alone), max(r["others"] for r in alone),
             len(quiet), len(alone), args.quiet_cpus))
    for name, group in (("quiet", quiet), ("alone, all", alone)):
        n = sum(len(r["cases"]) for r in group)
        for rule_name, rule in (("share rule (before)", share_rule),
                                ("shift rule (now)", shift_rule)):
            k = sum(rule(f) for r in group for f in r["cases"].values())
            lo, hi = wilson(k, n)
            print("%-11s %-20s flagged %3d of %4d cases (%.1f%%, 95%% interval %.1f-%.1f%%)"
                  % (name, rule_name, k, n, 100 * k / n if n else float("nan"), 100 * lo,
                     100 * hi))
    # Beside the hog: affected when the quiet runs' median of medians lies outside the run's
    # own interval and the run's median moved more than --affected from it. Quiet reference
    # from the quiet runs, else every run without the hog.
    ref_runs = quiet or alone
    reference = {}
    for key in {k for r in ref_runs for k in r["cases"]}:
        reference[key] = statistics.median(r["cases"][key][0] for r in ref_runs
                                           if key in r["cases"])
    affected, missed, unaffected_flagged, total = [], {}, 0, 0
    for r in hogged:
        for key, f in r["cases"].items():
            if key not in reference:
                continue
            total += 1
            hit = (not f[1] <= reference[key] <= f[2]
                   and abs(f[0] / reference[key] - 1) > args.affected)
            if hit:
                affected.append(f)
                if not shift_rule(f):
                    kernel = key.rsplit("/", 1)[1]
                    missed[kernel] = missed.get(kernel, 0) + 1
            else:
                unaffected_flagged += shift_rule(f)
    print("beside the hog: %d of %d cases affected (median moved more than %.0f%% and out of its "
          "interval from the quiet median); the share rule flagged %d of them, the shift rule %d "
          "(missed, by kernel: %s); the shift rule flagged %d of the %d unaffected"
          % (len(affected), total, 100 * args.affected, sum(share_rule(f) for f in affected),
             sum(shift_rule(f) for f in affected),
             ", ".join("%s %d" % kv for kv in sorted(missed.items())) or "none",
             unaffected_flagged, total - len(affected)))

if __name__ == "__main__":
    main()
