#!/usr/bin/env bash
# The GPU check, run on a machine with a GPU from a bundle made by ci/device-bundle.sh:
# environment, the GPU tests (CUDA kernels against the CPU reference, the CUPTI tracer, the
# timers), a short GPU suite stored in SQLite, and the GPU benchmarks. Everything it writes goes
# to $OUT (default ./device-out), at most 8 files: summary.txt, one log per step, gpu.db and
# traces.tgz. Each step's exit code is recorded; the script goes on.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$root/device-out}"
mkdir -p "$out"
bundle="$root/.device"
torch_lib="$("${ATTNPROF_PYTHON:-python3}" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
# The machine's own torch and CUDA 13 libraries (libcudart, libcupti come with the torch wheel's
# nvidia packages, or the toolkit).
export LD_LIBRARY_PATH="$bundle/lib:$torch_lib:$torch_lib/../../nvidia/cu13/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
step() {  # step NAME TIMEOUT_S COMMAND...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-12s rc=%-3s %4ss\n' "$name" "$rc" "$((SECONDS - t0))" | tee -a "$out/summary.txt"
  tail -n 25 "$out/$name.log"
}
cd "$root"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv \
  >"$out/summary.txt" 2>&1
step env 60 "$bundle/bin/attnprof" env
step device 300 "$bundle/bin/attnprof_device_tests" --duration=true
step suite 420 "$bundle/bin/attnprof" run scenarios/gpu-smoke.yaml --db "$out/gpu.db" \
  --require-hardware --cost-rows 6 --perfetto "${TMPDIR:-/tmp}/attnprof-traces"
tar czf "$out/traces.tgz" -C "${TMPDIR:-/tmp}" attnprof-traces 2>/dev/null
step bench 360 bash -c "'$bundle/bin/bench_torch_kernels'; '$bundle/bin/bench_torch_trace'"
cat "$out/summary.txt"
