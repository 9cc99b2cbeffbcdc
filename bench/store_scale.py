#!/usr/bin/env python3
"""What a read command costs as the history grows: attnprof's read commands beside a bare
sqlite3 query of the same rows and attnprof's own start-up, in one run, at several sizes.

    bench/store_scale.py --attnprof build/attnprof [--sizes 1000,10000,100000] [--dir DIR]
                         [--reps 5] [--template EXPORT.jsonl]

For each size N it builds a history of N runs (bench/synth_history.py from one real run of the
smoke suite, imported with `attnprof import`; kept in DIR/hist_N.db and reused when present),
then times, in shuffled order within each repetition so the machine's state falls on all alike:

  startup     attnprof --help                          (the process and its libraries)
  history     attnprof history --case K --last 30
  show        attnprof show latest
  trend       attnprof trend K                         (its default window)
  compare     attnprof compare latest --baseline history --no-record
  sqlite3     sqlite3 FILE "<the newest 30 medians of K>" (a bare query of history's rows)

It prints medians in ms and each command's excess over start-up, the figure the store promises
to keep within 20 ms at 100,000 runs, and the import's time (what a CI job that imports a whole
history branch of N runs would pay; the slice it imports instead is in docs/ci.md).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = "bert-base/prefill/b1-s128-fp32-causal/sdpa.math"
NEWEST_30 = (
    "SELECT s.median_ns FROM summaries s JOIN cases c ON c.id = s.case_id "
    "JOIN runs r ON r.id = c.run_id WHERE c.case_key = '{key}' ORDER BY r.started_ns DESC LIMIT 30")


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


def history(attnprof, dir_, tmpl, n):
    db = os.path.join(dir_, f"hist_{n}.db")
    if os.path.exists(db):
        return db, None
    jsonl = os.path.join(dir_, f"hist_{n}.jsonl")
    sh([sys.executable, os.path.join(HERE, "synth_history.py"), tmpl, "--runs", str(n),
        "--out", jsonl, "--no-cost"])
    t = time.perf_counter()
    sh([attnprof, "import", "--db", db + ".part", jsonl])
    took = time.perf_counter() - t
    os.rename(db + ".part", db)
    os.unlink(jsonl)
    return db, took


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1e3


def measure(attnprof, db, reps):
    key = CASE
    cmds = {
        "startup": [attnprof, "--help"],
        "history": [attnprof, "history", "--db", db, "--case", key, "--last", "30"],
        "show": [attnprof, "show", "latest", "--db", db],
        "trend": [attnprof, "trend", key, "--db", db],
        "compare": [attnprof, "compare", "latest", "--db", db, "--baseline", "history",
                    "--no-record"],
        "sqlite3": ["sqlite3", db, NEWEST_30.format(key=key)],
    }
    times = {k: [] for k in cmds}
    rng = random.Random(1)
    for _ in range(reps):
        order = list(cmds)
        rng.shuffle(order)
        for k in order:
            times[k].append(timed(cmds[k]))
    return {k: statistics.median(v) for k, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnprof", required=True)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "attnprof-store-scale"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--template")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    attnprof = os.path.abspath(a.attnprof)
    tmpl = a.template or template(attnprof, a.dir)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("| runs | file | import | startup | history --last 30 | show latest | trend | "
          "compare --baseline history | bare sqlite3 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in a.sizes.split(",")):
        db, took = history(attnprof, a.dir, tmpl, n)
        m = measure(attnprof, db, a.reps)
        up = m["startup"]
        rel = lambda k: f"{m[k]:.1f} ms (+{m[k] - up:.1f})"
        size = os.path.getsize(db) / 2**20
        imp = f"{took:.1f} s" if took is not None else "(reused)"
        print(f"| {n:,} | {size:.0f} MiB | {imp} | {up:.1f} ms | {rel('history')} | "
              f"{rel('show')} | {rel('trend')} | {rel('compare')} | {m['sqlite3']:.1f} ms |",
              flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
