#!/usr/bin/env bash
# Makes the AOTInductor packages a scenario names (kernels "aoti:PATH.pt2") with the venv's
# pinned torch, the version attnprof-worker's LibTorch is: ci/aoti-package.py says how.
#   ci/aoti-package.sh scenarios/aoti-cpu.yaml [--force] [--attnprof build/attnprof]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"
if [ ! -x "$ATTNPROF_VENV/bin/python" ]; then
  echo "error: no venv at $ATTNPROF_VENV: run ci/setup.sh first" >&2
  exit 3
fi
exec "$ATTNPROF_VENV/bin/python" "$here/aoti-package.py" "$@"
