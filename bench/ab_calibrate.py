#!/usr/bin/env python3
"""Calibrate `attnprof ab`: A/A coverage and false verdicts, and power on planted slowdowns.

Runs SESSIONS A/B sessions of one suite (4 cases) and tabulates the verdicts:

  aa      both sides the same build (built-in kernels, or the test plugin on both sides): the
          share of 99% intervals that hold 1.0 (coverage), and the false verdicts (regression or
          improvement) at each tolerance in --judge; a session runs at --tolerance and its stored
          rounds are judged again at the others with `attnprof compare --pair`
  power   the test plugin on both sides, the head side slowed by each fraction in --slowdowns
          (ATTNPROF_TEST_EXTRA: busy work for that fraction of the SDPA call's time, a slowdown
          of real work however noisy the machine): the share of sessions that call it a
          regression at --tolerance, and the time to verdict

--load N runs N bursty busy processes beside the sessions (each busy 0.1-2 s, idle 0.1-2 s, like
other jobs on a shared runner); every table gives the load average the sessions saw. A benchmark,
run on purpose (minutes to hours), never by ctest:

  bench/ab_calibrate.py aa --suite builtin --sessions 20 --load 2
  bench/ab_calibrate.py power --sessions 10 --slowdowns 0.02,0.05,0.10
  bench/ab_calibrate.py aa --attnprof /old/build/attnprof ...   # an older attnprof, same workers
  bench/ab_calibrate.py aa --suite builtin --compare-padding     # layout padding on and off
  bench/ab_calibrate.py power --slowdowns 0.05 --threads 1 --compare-cpus --load 2
                                                # the pair's workers on shared CPUs or not
  bench/ab_calibrate.py aa --suite builtin --compare-with "--no-shared-cpus OMP_PROC_BIND=close"
                                                # any other variant: ab arguments, environment
  bench/ab_calibrate.py tabulate --suite builtin a.jsonl b.jsonl
                                                # earlier campaigns' --out files, pooled

--minutes bounds the whole campaign: no session starts after it. Every verdict is appended to
--out (JSON lines) as it comes, so a campaign cut short still counts, and `tabulate` pools the
--out files of several campaigns into one table. Each rate comes with its 95% (Wilson) interval:
what the campaign's number of verdicts can tell apart.

Each session's stored rounds are also judged on each batch's median (the statistic before
attnprof ab recorded each batch's lower quartile): the pair is exported, its rounds' lower quartiles
are dropped, and `attnprof compare --pair` judges it in a scratch history, as it judges rounds
stored before schema v11. So both statistics are compared on the very same measurements; the
"medians" tables are the "before" of docs/statistics.md (the pairs each session took were
chosen by the stop rule on lower quartiles).
"""
import argparse
import collections
import json
import math
import os
import random
import shlex
import signal
import statistics
import subprocess
import sqlite3
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SUITES = {"builtin": os.path.join(HERE, "ab_calibrate.yaml"),
          "plugin": os.path.join(HERE, "ab_slowdown.yaml")}


def fraction(text):
    return float(text.rstrip("%")) / (100 if text.endswith("%") else 1)


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def start_load(n, seed):
    """N bursty busy loops (our own processes, ended by pid at the end)."""
    code = ("import random, time\nr = random.Random(%d)\n"
            "while True:\n"
            "    end = time.monotonic() + r.uniform(0.1, 2)\n"
            "    while time.monotonic() < end: pass\n"
            "    time.sleep(r.uniform(0.1, 2))\n")
    return [subprocess.Popen([sys.executable, "-c", code % (seed + i)]) for i in range(n)]


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    return p.returncode, p.stdout


def verdicts_of(path):
    if not os.path.exists(path):
        return None
    return json.load(open(path))["verdicts"]


def judge_on_medians(a, work, t, tolerances):
    """The latest pair judged again on its rounds' batch medians, at each tolerance."""
    exported = os.path.join(work, f"s{t}.jsonl")
    rc, out = run([a.attnprof, "export", "--db", a.db, "-o", exported])
    if rc != 0:
        sys.exit(f"session {t}: export failed: {out[-2000:]}")
    lines = [json.loads(x) for x in open(exported) if x.strip()]
    pairs = [x["ab_rounds"]["pair"] for x in lines if "ab_rounds" in x]
    pair = pairs[-1]
    keep = [lines[0]]
    for x in lines[1:]:
        if "ab_rounds" in x:
            if x["ab_rounds"]["pair"] != pair:
                continue
            for r in x["ab_rounds"]["rounds"]:
                r.pop("base_q1_ns", None)
                r.pop("head_q1_ns", None)
        elif json.dumps(x).find(pair) < 0:
            continue  # a run of another session
        keep.append(x)
    scratch = os.path.join(work, f"s{t}-medians.db")
    with open(exported, "w") as f:
        f.writelines(json.dumps(x) + "\n" for x in keep)
    rc, out = run([a.attnprof, "import", "--db", scratch, exported])
    if rc != 0:
        sys.exit(f"session {t}: import failed: {out[-2000:]}")
    judged = {}
    for tol in tolerances:
        jj = os.path.join(work, f"s{t}-medians-{tol.rstrip('%')}.json")
        run([a.attnprof, "compare", "--db", scratch, "--pair", pair, "--tolerance", tol,
             "--json", jj, "--no-record"])
        judged[tol] = verdicts_of(jj) or []
    return judged


def pair_spread(db):
    """Per case of the latest pair: how much its pairs of workers disagree, as three figures
    (a plain description for comparing sessions and variants; not the gate's statistic):
    "sd", the sd across pairs of each pair's median log ratio of lower quartiles; "within", the
    median over pairs of that median's own standard error (the rounds' robust sd, 1.4826 MAD,
    times sqrt(pi / 2n)); "tau", the sd between pairs beyond what "within" explains
    (DerSimonian-Laird, at least 0): the bias a pair of workers carries for its life."""
    con = sqlite3.connect(db)
    pair = con.execute("SELECT pair_id FROM runs WHERE pair_id <> '' "
                       "ORDER BY started_ns DESC LIMIT 1").fetchone()[0]
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    for key, p, b, h in con.execute("SELECT case_key, pass, base_q1_ns, head_q1_ns "
                                    "FROM ab_rounds WHERE pair_id = ?", (pair,)):
        if b > 0 and h > 0:
            by[key][p].append(math.log(h / b))
    con.close()
    out = {}
    for key, passes in by.items():
        ds = [d for d in passes.values() if len(d) >= 3]
        if len(ds) < 2:
            continue
        m = [statistics.median(d) for d in ds]
        se2 = []
        for d in ds:
            med = statistics.median(d)
            mad = 1.4826 * statistics.median(abs(x - med) for x in d)
            se2.append(max(mad * mad * math.pi / (2 * len(d)), 1e-12))
        w = [1 / v for v in se2]
        mu = sum(wi * mi for wi, mi in zip(w, m)) / sum(w)
        q = sum(wi * (mi - mu) ** 2 for wi, mi in zip(w, m))
        c = sum(w) - sum(wi * wi for wi in w) / sum(w)
        tau2 = max(0.0, (q - (len(m) - 1)) / c) if c > 0 else 0.0
        out[key] = {"sd": statistics.stdev(m), "tau": math.sqrt(tau2),
                    "within": math.sqrt(statistics.median(se2))}
    return out


# The variants --compare-padding and --compare-cpus alternate with the default: their label in
# the tables, and the attnprof ab option that makes them.
VARIANTS = {"no layout padding": "--no-layout-padding", "no shared CPUs": "--no-shared-cpus"}


def suite_file(a, work):
    """The suite's YAML; with --threads, a copy whose cases ask for that many threads."""
    path = SUITES[a.suite]
    if not a.threads:
        return path
    text = open(path).read()
    plain = "hardware: {device: cpu}"
    if plain not in text:
        sys.exit(f"{path}: no \"{plain}\" line for --threads to change")
    copy = os.path.join(work, f"suite-{a.threads}-threads.yaml")
    with open(copy, "w") as f:
        f.write(text.replace(plain, f"hardware: {{device: cpu, threads: {a.threads}}}"))
    return copy


def session(a, work, t, extra, variant=""):
    """One `attnprof ab` session; its verdicts at --tolerance and at each --judge tolerance."""
    suite = suite_file(a, work)
    js = os.path.join(work, f"s{t}.json")
    cmd = [a.attnprof, "ab", suite, "--base", a.build, "--db", a.db, "--tolerance", a.tolerance,
           "--json", js, "--no-trace", "--commit", f"t{t}"]
    if a.suite == "plugin":
        plugin = os.path.join(a.build, "tests", "plugin", "libattnprof_test_plugin.so")
        cmd += [f"--base-arg=--plugin={plugin}", f"--head-arg=--plugin={plugin}"]
    if extra > 0:
        cmd += [f"--head-arg=--env=ATTNPROF_TEST_EXTRA={extra}"]
    cmd += a.ab_args
    env = None
    if variant in VARIANTS:
        cmd += [VARIANTS[variant]]
    elif variant:
        # --compare-with: NAME=VALUE words set the environment, the rest are ab arguments
        words = shlex.split(variant)
        sets = [w for w in words if "=" in w and not w.startswith("-")]
        cmd += [w for w in words if w not in sets]
        env = dict(os.environ, **dict(w.split("=", 1) for w in sets))
    load0, t0 = loadavg(), time.monotonic()
    rc, out = run(cmd, env)
    wall = time.monotonic() - t0
    got = verdicts_of(js)
    if got is None:
        print(out[-3000:])
        sys.exit(f"session {t}: attnprof ab exited {rc} without a report")
    judged = {a.tolerance: got}
    for tol in a.judge.split(","):
        if tol and fraction(tol) != fraction(a.tolerance):
            jj = os.path.join(work, f"s{t}-{tol.rstrip('%')}.json")
            run([a.attnprof, "compare", "--db", a.db, "--pair", "latest", "--tolerance", tol,
                 "--json", jj, "--no-record"])
            judged[tol] = verdicts_of(jj) or []
    tolerances = [a.tolerance] + [x for x in a.judge.split(",") if x and x != a.tolerance]
    return {"session": t, "extra": extra, "wall_s": wall, "load": (load0 + loadavg()) / 2,
            "rc": rc, "verdicts": judged, "medians": judge_on_medians(a, work, t, tolerances),
            "variant": variant, "threads": a.threads, "suite": a.suite,
            **spread_fields(pair_spread(a.db))}


def spread_fields(per_case):
    """A session record's "spread" (the sd per case, as records have always held it), "tau" and
    "within" per case."""
    return {"spread": {k: v["sd"] for k, v in per_case.items()},
            "tau": {k: v["tau"] for k, v in per_case.items()},
            "within": {k: v["within"] for k, v in per_case.items()}}


def rate(k, n):
    """k of n as a percentage with its 95% Wilson score interval: what a campaign of n verdicts
    can tell (1 false in 100 is 0.2-5.4%)."""
    if n == 0:
        return f"{k} of 0"
    z = 1.959964
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (f"{k} of {n} ({100 * p:.1f}%; 95% interval {100 * max(0.0, mid - half):.1f}-"
            f"{100 * min(1.0, mid + half):.1f}%)")


def verdict_table(a, rs, extra, key, label):
    """Coverage (A/A), verdict counts and false verdicts per tolerance, of one statistic."""
    main = [v for r in rs for v in r[key][a.tolerance]]
    n = len(main)
    with_ci = [v for v in main if v.get("ci_low") is not None and v.get("ci_high") is not None]
    print(f"  judged on {label}:")
    if extra == 0:
        covered = sum(1 for v in with_ci if v["ci_low"] <= 1.0 <= v["ci_high"])
        print(f"    99% interval holds 1.0: {rate(covered, len(with_ci))}; "
              f"{n - len(with_ci)} verdicts without an interval")
    print(f"    {'tolerance':>9} | {'regr':>5} {'impr':>5} {'unch':>5} {'inconc':>6} | false")
    for tol, _ in sorted(rs[0][key].items(), key=lambda kv: fraction(kv[0])):
        c = collections.Counter(v["verdict"] for r in rs for v in r[key].get(tol, []))
        m = sum(c.values())
        false = c["regression"] + c["improvement"] if extra == 0 else c["improvement"] + (
            c["unchanged"] if extra > fraction(tol) else 0)
        print(f"    {tol:>9} | {c['regression']:>5} {c['improvement']:>5} {c['unchanged']:>5} "
              f"{c['inconclusive']:>6} | {rate(false, m)}")
    if extra > 0:
        found = sum(1 for v in main if v["verdict"] == "regression")
        print(f"    found at {a.tolerance}: {rate(found, n)}")


def summarize(a, records):
    by = collections.defaultdict(list)
    for r in records:
        # records written before variants held "padding": false for --no-layout-padding, and
        # before they held their suite, the one --suite names (power is always the plugin)
        variant = r.get("variant", "" if r.get("padding", True) else "no layout padding")
        suite = r.get("suite", a.suite if r["extra"] == 0 else "plugin")
        by[(suite, r["extra"], variant)].append(r)
    for (suite, extra, variant), rs in sorted(by.items()):
        loads = [r["load"] for r in rs]
        walls = sorted(r["wall_s"] for r in rs)
        n = sum(len(r["verdicts"][a.tolerance]) for r in rs)
        kind = "aa" if extra == 0 else "power"
        print(f"\n{kind} {suite}, slowdown {extra:.0%}: {len(rs)} sessions, {n} verdicts, "
              f"load average {min(loads):.1f}-{max(loads):.1f} "
              f"(mean {statistics.mean(loads):.1f}), "
              f"session wall median {walls[len(walls) // 2]:.0f} s, max {walls[-1]:.0f} s"
              + (f", {variant}" if variant else "")
              + (f", cases of {rs[0]['threads']} thread(s)" if rs[0].get("threads") else ""))
        spreads = [x for r in rs for x in r.get("spread", {}).values()]
        if spreads:
            print(f"  pairs of workers disagree by (sd of their median log ratios, median over "
                  f"{len(spreads)} cases): {100 * statistics.median(spreads):.2f}%")
        taus = [x for r in rs for x in r.get("tau", {}).values()]
        if taus:
            within = [x for r in rs for x in r.get("within", {}).values()]
            print(f"    of which a bias of the pair (tau, DerSimonian-Laird): "
                  f"{100 * statistics.median(taus):.2f}%; one pair's own standard error: "
                  f"{100 * statistics.median(within):.2f}%")
        verdict_table(a, rs, extra, "verdicts", "each batch's lower quartile (attnprof ab)")
        if all("medians" in r for r in rs):
            verdict_table(a, rs, extra, "medians", "each batch's median (the same rounds)")


def tabulate(a):
    """The tables of earlier campaigns' --out files, pooled: sessions of one suite, slowdown and
    variant from every file count together (records from before a record held its suite take
    --suite). Pool only campaigns of one build and one kind of machine state."""
    if not a.ab_args:
        sys.exit("tabulate: name the campaigns' --out files")
    records = []
    for path in a.ab_args:
        try:
            with open(path) as f:
                for n, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        r = json.loads(line)
                    except json.JSONDecodeError as e:
                        sys.exit(f"{path}:{n}: not a JSON record: {e}")
                    if a.tolerance not in r.get("verdicts", {}):
                        sys.exit(f"{path}:{n}: no verdicts at --tolerance {a.tolerance} "
                                 f"(this record has {', '.join(r.get('verdicts', {})) or 'none'})")
                    records.append(r)
        except OSError as e:
            sys.exit(f"{path}: {e.strerror}")
    print(f"{len(records)} sessions from {len(a.ab_args)} file(s)")
    if records:
        summarize(a, records)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["aa", "power", "tabulate"])
    ap.add_argument("--suite", choices=sorted(SUITES), default="plugin")
    ap.add_argument("--build", default="build", help="build folder with attnprof-worker")
    ap.add_argument("--attnprof", default="", help="attnprof executable (default: BUILD/attnprof)")
    ap.add_argument("--sessions", type=int, default=10, help="per slowdown")
    ap.add_argument("--tolerance", default="1%", help="the sessions' tolerance (stop rule)")
    ap.add_argument("--judge", default="1%,2%,5%",
                    help="tolerances the stored rounds are judged at")
    ap.add_argument("--slowdowns", default="0.02,0.05,0.10", help="power: head-side fractions")
    ap.add_argument("--load", type=int, default=0, help="bursty busy processes beside the sessions")
    ap.add_argument("--compare-padding", action="store_true",
                    help="alternate sessions with and without --no-layout-padding")
    ap.add_argument("--compare-cpus", action="store_true",
                    help="alternate sessions with and without --no-shared-cpus")
    ap.add_argument("--compare-with", default="", metavar="WORDS",
                    help="alternate sessions with and without WORDS: more attnprof ab arguments "
                         "and NAME=VALUE settings of its environment, e.g. "
                         "\"--no-shared-cpus OMP_PROC_BIND=close\"")
    ap.add_argument("--threads", type=int, default=0,
                    help="the suite's cases ask for this many threads (default: the "
                         "scenario's, the physical cores); shared CPUs need fewer than the CPUs")
    ap.add_argument("--minutes", type=float, default=0, help="no session starts after this")
    ap.add_argument("--db", default="")
    ap.add_argument("--out", default="", help="JSON lines: one record per session")
    ap.add_argument("ab_args", nargs="*",
                    help="after --: more attnprof ab arguments; tabulate: the --out files")
    # argparse gives a trailing positional nothing once `kind` is read: what follows `--` is
    # the ab arguments.
    a, rest = ap.parse_known_args()
    if a.kind == "tabulate":
        a.ab_args += [x for x in rest if x != "--"]
        tabulate(a)
        return
    if rest and rest[0] != "--":
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    a.ab_args += rest[1:]
    a.build = os.path.abspath(a.build)
    a.attnprof = os.path.abspath(a.attnprof or os.path.join(a.build, "attnprof"))
    work = tempfile.mkdtemp(prefix="attnprof-calibrate-")
    a.db = os.path.abspath(a.db) if a.db else os.path.join(work, "calibrate.db")
    if a.kind == "aa" and a.suite == "plugin" and "ATTNPROF_TEST_EXTRA" in " ".join(a.ab_args):
        sys.exit("aa: no ATTNPROF_TEST_EXTRA")
    if a.kind == "power":
        a.suite = "plugin"
    extras = [0.0] if a.kind == "aa" else [float(x) for x in a.slowdowns.split(",")]
    variants = ([""] + (["no layout padding"] if a.compare_padding else [])
                + (["no shared CPUs"] if a.compare_cpus else [])
                + ([a.compare_with] if a.compare_with else []))
    load = start_load(a.load, random.randrange(1 << 30)) if a.load else []
    records, start = [], time.monotonic()
    try:
        for t in range(a.sessions):
            for extra, variant in [(x, v) for x in extras for v in variants]:
                # interleaved, so every slowdown (and variant) sees the same machine states
                if a.minutes and time.monotonic() - start > a.minutes * 60:
                    raise TimeoutError
                r = session(a, work, len(records), extra, variant)
                records.append(r)
                if a.out:
                    with open(a.out, "a") as f:
                        f.write(json.dumps(r) + "\n")
                c = collections.Counter(v["verdict"] for v in r["verdicts"][a.tolerance])
                m = collections.Counter(v["verdict"] for v in r["medians"][a.tolerance])
                print(f"session {len(records)}: slowdown {extra:.0%}"
                      f"{f' ({variant})' if variant else ''}, {dict(c)}, on medians {dict(m)}, "
                      f"{r['wall_s']:.0f} s, load {r['load']:.1f}", flush=True)
    except (TimeoutError, KeyboardInterrupt):
        print(f"stopped after {len(records)} sessions ({(time.monotonic() - start) / 60:.1f} min)")
    finally:
        for p in load:
            p.send_signal(signal.SIGTERM)
            p.wait()
    if records:
        summarize(a, records)
    print(f"\ndatabase {a.db}")


if __name__ == "__main__":
    main()
