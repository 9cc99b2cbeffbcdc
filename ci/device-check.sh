#!/usr/bin/env bash
# The GPU check, run on a machine with a GPU from a bundle made by ci/device-bundle.sh:
# environment, the GPU tests (CUDA kernels against the CPU reference, the CUPTI tracer, the
# timers), a short GPU suite stored in SQLite with its cost matrices and Perfetto traces, the GPU
# benchmarks, what attnprof says of the GPU around a case against nvidia-smi (clocks, a co-tenant,
# energy), and AOTInductor packages made and run on the GPU (ci/device-aoti.yaml). Everything
# goes to $OUT (default: a new folder under $TMPDIR, named on the first line; never the
# checkout, where it would lie untracked) as it happens: one log per step,
# written while the step runs, and summary.txt, one line per step (ok, failed, timed out or
# skipped, and why), rewritten after every step. So a check cut short still returns what ran.
#
# Time: a lent GPU machine gives minutes, not hours. Every step has a hard limit (SIGTERM, then
# SIGKILL 10 s later), and the whole check ends within ATTNPROF_CHECK_BUDGET seconds (default
# 450, under 8 minutes): a step that would not fit in what is left is skipped, saying so.
# ATTNPROF_DEVICE_STEP_S sets the device tests' limit (default 120).
#
# Exit: 0 when every step that ran passed, or when there is no GPU (a dry run: it says so in
# seconds); 1 when a step failed or timed out; 3 when the bundle is missing.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/attnprof-device-XXXXXX")}"
mkdir -p "$out"
echo "device check: logs in $out"
bundle="${ATTNPROF_BUNDLE:-$root/.device}"
budget="${ATTNPROF_CHECK_BUDGET:-450}"
summary="$out/summary.txt"
start=$SECONDS
: >"$summary"
declare -a lines=()
record() {  # one line of the summary, rewritten whole so it is complete after every step
  lines+=("$1")
  printf '%s\n' "${lines[@]}" >"$summary"
  printf '%s\n' "$1"
}

# No GPU: nothing here can say anything about the GPU path. Say so and stop cleanly, before
# touching the bundle or python (a dry run on a CPU machine takes well under a second).
gpu_name=""
if command -v nvidia-smi >/dev/null 2>&1; then
  gpu_name="$(timeout -k 5 20 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null |
    head -n 1)"
fi
if [ -z "$gpu_name" ]; then
  why="nvidia-smi not found"
  command -v nvidia-smi >/dev/null 2>&1 && why="nvidia-smi lists no GPU"
  record "no GPU: $why; nothing checked (dry run)"
  exit 0
fi
record "gpu: $gpu_name"
for f in attnprof attnprof-worker attnprof_device_tests; do
  if [ ! -x "$bundle/bin/$f" ]; then
    record "bundle: $bundle/bin/$f missing; run ci/device-bundle.sh on the build machine"
    exit 3
  fi
done

python="${ATTNPROF_PYTHON:-python3}"
torch_lib="$(timeout -k 5 60 "$python" -c \
  'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)"
[ -n "$torch_lib" ] || record "torch: $python cannot import torch; the worker will not start"
# The machine's own torch and CUDA 13 libraries (libcudart, libcupti come with the torch wheel's
# nvidia packages, or the toolkit).
export LD_LIBRARY_PATH="$bundle/lib:$torch_lib:$torch_lib/../../nvidia/cu13/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export ATTNPROF_WORKER="$bundle/bin/attnprof-worker"

failed=0
step() {  # step NAME LIMIT_S COMMAND...
  local name=$1 limit=$2
  shift 2
  local left=$((budget - (SECONDS - start)))
  if [ "$left" -lt "$limit" ]; then
    record "$(printf '%-10s skipped: %ss left of the %ss budget, the step may take %ss' \
      "$name" "$left" "$budget" "$limit")"
    return
  fi
  local t0=$SECONDS
  timeout -k 10 "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$? verdict
  case $rc in
    0) verdict=ok ;;
    124 | 137) verdict="timed out after ${limit}s"; failed=1 ;;
    *) verdict="failed (exit $rc)"; failed=1 ;;
  esac
  record "$(printf '%-10s %s in %ss, log %s.log' "$name" "$verdict" "$((SECONDS - t0))" "$name")"
  tail -n 15 "$out/$name.log"
}

cd "$root"
step nvidia-smi 30 nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,MEMORY
step env 60 "$bundle/bin/attnprof" env
step device ${ATTNPROF_DEVICE_STEP_S:-120} "$bundle/bin/attnprof_device_tests" --duration=true
# Perfetto traces straight into $OUT: a cut-short suite still leaves the cases it traced.
mkdir -p "$out/traces"
step suite 150 "$bundle/bin/attnprof" run scenarios/gpu-smoke.yaml --db "$out/gpu.db" \
  --require-hardware --cost-rows 8 --perfetto "$out/traces"
# bench_torch_timers: CUPTI vs events and graph vs cold on the same calls; bench_torch_kernels:
# our CUDA kernels vs sdpa.flash in TFLOP/s and as a fraction of peak.
for b in bench_torch_timers bench_torch_kernels bench_torch_agreement bench_torch_trace; do
  if [ -x "$bundle/bin/$b" ]; then
    step "$b" 45 "$bundle/bin/$b"
  else
    record "$(printf '%-10s skipped: not in the bundle' "$b")"
  fi
done
# What attnprof says of the GPU around a case, against nvidia-smi (ci/device-gpu-watch.py): the
# per-sample SM clock, a planted co-tenant named (and refused by --require-idle-gpu), the energy
# per call of a long kernel against power x time. Not yet run on a GPU: written without one, so
# a failure here may be the check's as much as the code's; its log has the numbers.
for w in clocks cotenant energy; do
  step "gpu-$w" 90 "$python" ci/device-gpu-watch.py "$w" --attnprof "$bundle/bin/attnprof" \
    --out "$out/gpu-watch" --python "$python"
done
# Compiled attention: AOTInductor packages of BERT-base attention (kernel and block) made here
# with this machine's torch (Triton code for this GPU), then run beside eager and sdpa.flash.
# Last, so the steps the GPU path needs most run first; skipped when the budget is spent.
step aoti-pack 150 "$python" ci/aoti-package.py ci/device-aoti.yaml \
  --attnprof "$bundle/bin/attnprof" --cache "$out/aoti-cache"
if [ -f ci/device-aoti-bert-base-kernel.pt2 ] || [ -f ci/device-aoti-bert-base-block.pt2 ]; then
  step aoti-run 60 "$bundle/bin/attnprof" run ci/device-aoti.yaml --db "$out/aoti.db" \
    --cost-rows 8
fi
record "total $((SECONDS - start))s of a ${budget}s budget"
exit "$failed"
