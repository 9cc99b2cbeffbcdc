#!/usr/bin/env python3
"""What a read command costs as the history grows: attnprof's read commands beside a bare
sqlite3 query of the same rows and attnprof's own start-up, in one run, at several sizes; with
--before, an older attnprof's the same way, interleaved with this one's.

    bench/store_scale.py --attnprof build/attnprof [--before OLD/attnprof]
                         [--sizes 1000,10000,100000] [--dir DIR] [--reps 7] [--quiet 20]
                         [--template EXPORT.jsonl]

For each size N and each attnprof it builds a history of N runs (bench/synth_history.py from
one real run of the smoke suite, imported with that attnprof's `import`, so each history has
its own attnprof's schema; kept in DIR/<label>/hist_N.db and reused when present), then, in
each repetition, times every command of both in one shuffled order, so that a busy machine
falls on all of them alike:

  startup     attnprof history --help                   (the process and its libraries)
  history     attnprof history --case K --last 30
  show        attnprof show latest
  trend       attnprof trend K                          (its default window)
  compare     attnprof compare --baseline history --no-record   (judges the newest run)
  sqlite3     sqlite3 FILE "<the newest 30 medians of K>" (history's rows, history's plan)

Each command's excess over start-up is taken per repetition (the same repetition's start-up of
the same attnprof) and printed as its median with the smallest and largest (the spread), in
wall time and in CPU time (the child's user + system time: on a shared machine, wall time also
holds the time spent waiting for a CPU); the store promises to keep it within 20 ms at 100,000
runs. The start-up and sqlite3 columns are medians in ms. The import column is the time that attnprof took to import the N runs (a CI job
that imports a whole history branch pays about that; bench/ci_import.sh times the slice).
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = "bert-base/prefill/b1-s128-fp32-causal/sdpa.math"
# The rows `history --case K --last 30` prints, by the plan its statement has (store/history.cpp:
# runs newest first from runs_by_time, each probing its case of K); SQLite's own plan for a plain
# join reads every case of K and sorts them, tens of ms at 10,000 runs.
NEWEST_30 = (
    "SELECT s.median_ns FROM runs r CROSS JOIN cases c CROSS JOIN summaries s "
    "WHERE c.case_key = '{key}' AND c.run_id = r.id AND s.case_id = c.id "
    "AND r.status = 'complete' ORDER BY r.started_ns DESC, r.rowid DESC LIMIT 30")
# What each command may exit with: compare exits 1 on a regression, a verdict like any other.
READS = ("history", "show", "trend", "compare")
OK_EXIT = {"compare": (0, 1)}


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def template(attnprof, dir_):
    path = os.path.join(dir_, "template.jsonl")
    if os.path.exists(path):
        return path
    db = os.path.join(dir_, "template.db")
    sh([attnprof, "run", "--db", db, "--no-trace"])
    sh([attnprof, "export", "--db", db, "-o", path])
    return path


def history(attnprof, dir_, tmpl, n, quiet):
    """DIR/hist_N.db, made by this attnprof's import; with the import's seconds when made now."""
    os.makedirs(dir_, exist_ok=True)
    db = os.path.join(dir_, f"hist_{n}.db")
    if os.path.exists(db):
        return db, None
    jsonl = os.path.join(dir_, f"hist_{n}.jsonl")
    sh([sys.executable, os.path.join(HERE, "synth_history.py"), tmpl, "--runs", str(n),
        "--out", jsonl, "--no-cost", "--quiet", str(quiet)])
    for stale in (db + ".part", db + ".part-wal", db + ".part-shm"):
        if os.path.exists(stale):
            os.unlink(stale)
    t = time.perf_counter()
    sh([attnprof, "import", "--db", db + ".part", jsonl])
    took = time.perf_counter() - t
    os.rename(db + ".part", db)
    os.unlink(jsonl)
    return db, took


def commands(attnprof, db):
    return {
        "startup": [attnprof, "history", "--help"],
        "history": [attnprof, "history", "--db", db, "--case", CASE, "--last", "30"],
        "show": [attnprof, "show", "latest", "--db", db],
        "trend": [attnprof, "trend", CASE, "--db", db],
        "compare": [attnprof, "compare", "--db", db, "--baseline", "history",
                    "--no-record"],
        "sqlite3": ["sqlite3", db, NEWEST_30.format(key=CASE)],
    }


def timed(name, cmd):
    """(wall ms, CPU ms): the child's user and system time, which the neighbours of a shared
    machine delay but do not add to."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t) * 1e3
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in OK_EXIT.get(name, (0,)):
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}: {err.decode()[:400]}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1e3


def measure(dbs, reps, seed):
    """{label: {command: [(wall ms, CPU ms) per repetition]}}, every command of every label in
    one shuffled order per repetition."""
    items = [(label, name, cmd) for label, (attnprof, db) in dbs.items()
             for name, cmd in commands(attnprof, db).items()]
    times = {label: {name: [] for _, name, _ in items} for label in dbs}
    rng = random.Random(seed)
    for _ in range(reps):
        rng.shuffle(items)
        for label, name, cmd in items:
            times[label][name].append(timed(name, cmd))
    return times


def excess(t, name, i):
    """The median of this command's per-repetition excess over start-up (i: 0 wall, 1 CPU),
    with the smallest and largest."""
    d = sorted(a[i] - b[i] for a, b in zip(t[name], t["startup"]))
    return f"{statistics.median(d):+.1f} ({d[0]:+.1f}..{d[-1]:+.1f})"


def median_of(t, name, i):
    return f"{statistics.median(x[i] for x in t[name]):.1f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnprof", required=True)
    ap.add_argument("--before", help="an older attnprof, measured beside it")
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "attnprof-store-scale"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quiet", type=int, default=20,
                    help="samples kept per case (synth_history.py --quiet)")
    ap.add_argument("--template")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    bins = {"after": os.path.abspath(a.attnprof)}
    if a.before:
        bins = {"before": os.path.abspath(a.before), **bins}
    tmpl = a.template or template(bins["after"], a.dir)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"{a.reps} repetitions; each command's excess over start-up in ms, wall time and CPU "
          "time (user + system): median (smallest..largest)")
    print("| attnprof | runs | file | import | load | clock | startup | history --last 30 | "
          "show latest | trend | compare --baseline history | bare sqlite3 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in a.sizes.split(",")):
        made = {label: history(b, os.path.join(a.dir, label), tmpl, n, a.quiet)
                for label, b in bins.items()}
        load = os.getloadavg()[0]
        times = measure({label: (bins[label], db) for label, (db, _) in made.items()}, a.reps, n)
        load = f"{load:.1f}-{os.getloadavg()[0]:.1f}"
        for label, (db, took) in made.items():
            t = times[label]
            size = os.path.getsize(db) / 2**20
            imp = f"{took:.0f} s" if took is not None else "(reused)"
            for i, clock in enumerate(("wall", "CPU")):
                cells = " | ".join(excess(t, k, i) for k in READS)
                print(f"| {label} | {n:,} | {size:,.0f} MiB | {imp} | {load} | {clock} | "
                      f"{median_of(t, 'startup', i)} | {cells} | {median_of(t, 'sqlite3', i)} |",
                      flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
