#!/usr/bin/env python3
"""What attnprof says of the GPU around a case, checked against the driver's own tools on a real
GPU (ci/device-check.sh runs each step; nothing here has run on a GPU yet, so its first run is
the rule's first test):

  clocks   a long case's per-sample SM clocks (the timestamps kernel, else NVML) against
           nvidia-smi's SM clock sampled every 50 ms meanwhile: medians within 5%
  cotenant a process holding a CUDA context and busy on the same GPU, started before the case:
           `run` names it ("its GPU shared with 1 other process", its pid in the message), and
           `run --require-idle-gpu` stops with exit 3 naming it; then a process that only holds
           a context, idle: not counted (gpu.other_processes 0), named as idle in the message,
           and `--require-idle-gpu` measures the case
  energy   a long case's energy.joules_per_call against nvidia-smi's average power.draw over the
           samples x the median call time: within 10%

    ci/device-gpu-watch.py STEP --attnprof PATH --out DIR [--python PYTHON]

Exit 0 when the step's claim holds, 1 when it does not (the numbers on stdout), 2 on bad usage.
"""
import argparse
import contextlib
import os
import sqlite3
import statistics
import subprocess
import sys
import time

# One long causal prefill, a few ms a call on any recent GPU: long enough that its energy is its
# own (the flush and the gaps between calls are small beside it) and that NVML's counter moves.
SCENARIO = """name: gpu-watch
hardware: {device: cuda}
dtype: bf16
measure: {warmup: 200ms, min_samples: 50, max_samples: 400, max_noise: 1%, time_budget: 6s,
          trace: false}
workloads:
  - {name: long, model: llama-2-7b, batch: 4, seq_len: 8192, mask: causal, kernels: [sdpa.flash]}
"""

# A co-tenant: a CUDA context kept busy with matrix products until killed.
COTENANT = ("import torch, sys\n"
            "x = torch.randn(4096, 4096, device='cuda')\n"
            "print('ready', flush=True)\n"
            "while True:\n"
            "    x = (x @ x).clamp_(-1, 1)\n"
            "    torch.cuda.synchronize()\n")

# A process that holds a CUDA context and does nothing with it (a display server, a notebook).
IDLE_HOLDER = ("import torch, time\n"
               "torch.zeros(1, device='cuda')\n"
               "print('ready', flush=True)\n"
               "time.sleep(3600)\n")


def smi_poll(field, out_path):
    """nvidia-smi printing `field` every 50 ms into out_path, until killed."""
    f = open(out_path, "w")
    return subprocess.Popen(["nvidia-smi", "--query-gpu=" + field, "--format=csv,noheader,nounits",
                             "-i", "0", "-lms", "50"], stdout=f, stderr=subprocess.DEVNULL), f


def smi_values(path):
    vals = []
    with open(path) as f:
        for line in f:
            try:
                vals.append(float(line.strip()))
            except ValueError:
                pass
    return vals


def run_case(args, extra=()):
    scenario = os.path.join(args.out, "gpu-watch.yaml")
    with open(scenario, "w") as f:
        f.write(SCENARIO)
    db = os.path.join(args.out, "gpu-watch.db")
    cmd = [args.attnprof, "run", scenario, "--db", db, "--no-trace", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    print(p.stdout[-3000:], p.stderr[-2000:], sep="\n")
    return p, db


def run_case_beside_smi(args, field, out_path):
    """run_case while nvidia-smi records `field` into out_path: (the run, its history)."""
    poll, f = smi_poll(field, out_path)
    try:
        return run_case(args)
    finally:
        poll.kill()
        poll.wait()
        f.close()


def latest_case(db):
    con = sqlite3.connect(db)
    case_id, message = con.execute(
        "SELECT c.id, c.message FROM cases c JOIN runs r ON r.id = c.run_id "
        "ORDER BY r.started_ns DESC LIMIT 1").fetchone()
    clocks = [r[0] for r in con.execute(
        "SELECT sm_clock_mhz FROM samples WHERE case_id = ? AND sm_clock_mhz IS NOT NULL",
        (case_id,))]
    ns = [r[0] for r in con.execute("SELECT ns FROM samples WHERE case_id = ?", (case_id,))]
    metrics = dict(con.execute("SELECT name, value FROM metrics WHERE case_id = ?", (case_id,)))
    con.close()
    return message, clocks, ns, metrics


def within(name, got, want, tolerance):
    ok = want > 0 and abs(got - want) <= tolerance * want
    print("%s: attnprof %.4g, reference %.4g (%+.1f%%), tolerance %.0f%%: %s"
          % (name, got, want, 100 * (got - want) / want if want else float("nan"),
             100 * tolerance, "ok" if ok else "FAILED"))
    return ok


def step_clocks(args):
    p, db = run_case_beside_smi(args, "clocks.sm", os.path.join(args.out, "smi-clocks.csv"))
    if p.returncode != 0:
        return False
    _, clocks, _, metrics = latest_case(db)
    smi = smi_values(os.path.join(args.out, "smi-clocks.csv"))
    print("samples with a clock: %d (share from the timestamps kernel %s, the rest NVML's); "
          "nvidia-smi readings: %d; expected clock %s MHz; throttled share %s"
          % (len(clocks), metrics.get("gpu.clock.timestamped"), len(smi),
             metrics.get("gpu.clock.expected_mhz"), metrics.get("measure.throttled")))
    if not clocks or not smi:
        print("FAILED: no clocks to compare")
        return False
    # nvidia-smi's readings while the GPU idled (warm-up, the worker's start) sit at the idle
    # clock: compare against the readings taken under load, its upper half.
    busy = sorted(smi)[len(smi) // 2:]
    return within("median SM clock (MHz)", statistics.median(clocks), statistics.median(busy), 0.05)


@contextlib.contextmanager
def beside(args, script):
    """A python running `script` on the GPU for the block's length: the process once it said
    ready, else None; killed when the block ends."""
    proc = subprocess.Popen([args.python, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        yield proc if proc.stdout.readline().strip() == "ready" else None
    finally:
        proc.kill()
        proc.wait()


def step_cotenant(args):
    with beside(args, COTENANT) as co:
        if co is None:
            print("FAILED: the co-tenant did not start")
            return False
        p, db = run_case(args)
        message, _, _, metrics = latest_case(db)
        named = "its GPU shared with 1 other process" in p.stdout and \
            ("pid %d" % co.pid) in message
        print("run: other processes %s, message %r: %s"
              % (metrics.get("gpu.other_processes"), message, "ok" if named else "FAILED"))
        q, _ = run_case(args, ["--require-idle-gpu"])
        refused = q.returncode == 3 and ("the GPU is shared with pid %d" % co.pid) in q.stdout \
            and "--require-idle-gpu stopped the run" in q.stdout
        print("run --require-idle-gpu: exit %d: %s" % (q.returncode, "ok" if refused else "FAILED"))
    with beside(args, IDLE_HOLDER) as holder:
        if holder is None:
            print("FAILED: the idle holder did not start")
            return False
        p, db = run_case(args)
        message, _, _, metrics = latest_case(db)
        idle_ok = metrics.get("gpu.other_processes") == 0 and \
            ("pid %d" % holder.pid) in message and "idle" in message
        print("run beside an idle holder: other processes %s, idle %s, message %r: %s"
              % (metrics.get("gpu.other_processes"), metrics.get("gpu.other_processes_idle"),
                 message, "ok" if idle_ok else "FAILED"))
        q, _ = run_case(args, ["--require-idle-gpu"])
        measured = q.returncode == 0
        print("run --require-idle-gpu beside it: exit %d: %s"
              % (q.returncode, "ok" if measured else "FAILED"))
    return named and refused and idle_ok and measured


def step_energy(args):
    p, db = run_case_beside_smi(args, "power.draw", os.path.join(args.out, "smi-power.csv"))
    if p.returncode != 0:
        return False
    _, _, ns, metrics = latest_case(db)
    if "energy.joules_per_call" not in metrics:
        print("FAILED: no energy.joules_per_call (no NVML energy counter on this GPU?)")
        return False
    watts = smi_values(os.path.join(args.out, "smi-power.csv"))
    busy = sorted(watts)[len(watts) // 2:]  # under load, as for the clocks
    reference = statistics.median(busy) * statistics.median(ns) * 1e-9
    print("average power: attnprof %.1f W, nvidia-smi under load %.1f W"
          % (metrics.get("power.average_w", 0), statistics.median(busy)))
    return within("joules per call", metrics["energy.joules_per_call"], reference, 0.10)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("step", choices=["clocks", "cotenant", "energy"])
    p.add_argument("--attnprof", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--python", default=sys.executable)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    ok = {"clocks": step_clocks, "cotenant": step_cotenant, "energy": step_energy}[args.step](args)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
