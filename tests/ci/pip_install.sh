#!/usr/bin/env bash
# The pip path (pyproject.toml) end to end: `pip install --no-build-isolation .` into a fresh venv
# that has torch, then the installed attnprof, found on that venv's PATH, must start the worker
# installed beside it, name that torch in `attnprof env`, and run two real cases.
# Usage: pip_install.sh SOURCE_DIR WORK_DIR BUILD_DIR
#   WORK_DIR holds the venv, the logs and the database (made anew each run); BUILD_DIR is pip's
#   CMake build folder, emptied first and removed after a pass. A sibling of the ci build folder
#   (<checkout>/build-pip-install beside <checkout>/build) makes ccache hit on that build's
#   objects: CCACHE_BASEDIR makes paths relative to the build folder, so only a folder at the
#   same depth under the checkout gives the same compile commands (35 s here instead of 4 min).
# The fresh venv sees the pinned torch through a .pth file naming the pinned venv's
# site-packages: the user's case of an environment that has torch, without copying its 4.7 GB.
# Not `--system-site-packages`: a venv made by a venv's python takes its base interpreter's
# site-packages for that, not the venv's. The .pth is written after scikit-build-core is
# installed, so pip resolves that install in the fresh venv alone, and the venv's own packages
# come first on sys.path.
# scikit-build-core comes from $ATTNPROF_HOME/wheels, else PyPI (then kept there); exit 77
# (skipped) when neither has it, or without the pinned venv (ci/setup.sh).
set -euo pipefail
src="$1" work="$2" build="$3"
say() { printf 'pip_install: %s\n' "$*"; }
# The pinned torch, whatever the caller's environment would choose (ci/env.sh's rule).
unset ATTNPROF_PYTHON VIRTUAL_ENV
# shellcheck source=ci/env.sh
source "$src/ci/env.sh"  # the CUDA toolkit (CUDAToolkit_ROOT, CUDACXX) and ccache settings
pinned="$ATTNPROF_VENV/bin/python"
if ! torch_pkg="$(attnprof_torch_package "$pinned")"; then
  say "skipped: no pinned venv with torch at $ATTNPROF_VENV (run ci/setup.sh)"
  exit 77
fi
torch_version="$(attnprof_torch_field "$torch_pkg" __version__)"
torch_version="${torch_version%%+*}"  # as LibTorch's CMake package says it: 2.11.0

# One run at a time for a work folder and the build folder that goes with it.
mkdir -p "$(dirname "$work")"
exec 9>"$work.lock"
flock 9
rm -rf "$work"
mkdir -p "$work"
venv="$work/venv"
"$pinned" -m venv "$venv"
wheels="$ATTNPROF_HOME/wheels"
if ! "$venv/bin/pip" install -q --no-index --find-links "$wheels" scikit-build-core \
       >"$work/skbuild.log" 2>&1; then
  mkdir -p "$wheels"
  if ! { "$venv/bin/pip" download -q -d "$wheels" scikit-build-core &&
         "$venv/bin/pip" install -q --no-index --find-links "$wheels" scikit-build-core; } \
       >>"$work/skbuild.log" 2>&1; then
    tail -n 5 "$work/skbuild.log"
    say "skipped: scikit-build-core can be had neither from $wheels nor from PyPI"
    exit 77
  fi
fi
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
dirname "$torch_pkg" >"$site/_attnprof_pinned_torch.pth"
if [ "$("$venv/bin/python" -c 'import torch.utils; print(torch.utils.__file__)')" != \
     "$torch_pkg/utils/__init__.py" ]; then
  say "FAILED: the fresh venv does not see the pinned torch at $torch_pkg"
  exit 1
fi

rm -rf "$build"
size_before="$(du -sk "$venv" | cut -f1)"
t0="$(date +%s%N)"
if ! (cd "$src" && "$venv/bin/pip" install --no-build-isolation -v \
        --config-settings=build-dir="$build" .) >"$work/pip.log" 2>&1; then
  tail -n 40 "$work/pip.log"
  say "FAILED: pip install (the whole log: $work/pip.log)"
  exit 1
fi
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
size_after="$(du -sk "$venv" | cut -f1)"
grep -F -- '-- attnprof: LibTorch' "$work/pip.log" | sed 's/^ *//' || true
say "pip install took $(( ms / 1000 )).$(( ms % 1000 / 100 )) s and added" \
    "$(( (size_after - size_before) / 1024 )) MiB to the venv"
rm -rf "$build"

# Found on the venv's PATH, as a user would run it.
export PATH="$venv/bin:$PATH"
for exe in attnprof attnprof-worker; do
  if [ "$(command -v "$exe")" != "$venv/bin/$exe" ]; then
    say "FAILED: $exe is not on the venv's PATH (found: $(command -v "$exe" || echo nothing))"
    exit 1
  fi
done
cd "$work"
attnprof env >"$work/env.txt" 2>&1 || { cat "$work/env.txt"; say "FAILED: attnprof env"; exit 1; }
cat "$work/env.txt"
want_worker="worker:         $venv/bin/attnprof-worker"
want_torch="torch source:   pip install $venv/bin/python* (torch $torch_version in $torch_pkg)"
env_txt="$(cat "$work/env.txt")"
if [[ "$env_txt" != *"$want_worker"* ]]; then
  say "FAILED: attnprof env does not say the worker beside it: want '$want_worker'"
  exit 1
fi
# shellcheck disable=SC2053 # the pattern's * stands for python's name (python, python3.11)
if ! grep -q '^torch source:' "$work/env.txt" ||
   [[ "$(grep '^torch source:' "$work/env.txt")" != $want_torch ]]; then
  say "FAILED: attnprof env does not name the pinned torch: want '$want_torch'"
  exit 1
fi

attnprof run "$src/tests/ci/tiny.yaml" --db "$work/x.db" >"$work/run.txt" 2>&1 ||
  { cat "$work/run.txt"; say "FAILED: attnprof run"; exit 1; }
grep -F '2 cases: 2 ok' "$work/run.txt" ||
  { cat "$work/run.txt"; say "FAILED: the two cases did not both pass"; exit 1; }
say "passed"
