#!/usr/bin/env bash
# Installs everything attnprof needs to build and test, on a fresh Debian 12 machine or an
# Ubuntu GPU runner. Idempotent: each step checks first and says what it did or skipped.
#
# Which torch (ci/env.sh has the rule): ATTNPROF_PYTHON=/path/to/python's, else the active
# venv's if it has torch, else the pinned venv's, which only then is installed. A user's torch is
# used as it is: nothing is installed into its environment.
#
# Where things go (outside the checkout, so a fresh clone reuses them):
#   ATTNPROF_HOME (default ~/.cache/attnprof)/venv   Python venv with the pinned torch wheel,
#                                                     whose CMake package is our LibTorch, and,
#                                                     on a machine without a CUDA toolkit of
#                                                     the wheel's major, NVIDIA's compiler
#                                                     wheels (ci/cuda-wheels.txt).
# Prints, as its last line, nothing; callers source ci/env.sh to get the paths.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=ci/env.sh
source "$here/env.sh"

say() { printf 'setup: %s\n' "$*"; }
t0=$(date +%s)

# --- Debian/Ubuntu packages -------------------------------------------------------------
# yaml-cpp, doctest, CLI11, nlohmann-json, fmt, SQLite and libpq (the fleet server's client) come
# from the distribution: they are well kept there and need no vendoring.
pkgs=(build-essential cmake ninja-build ccache pkg-config python3-venv
      libyaml-cpp-dev doctest-dev libcli11-dev nlohmann-json3-dev libfmt-dev
      libsqlite3-dev sqlite3 libpq-dev)
# What only the tests use (ci/test sets ATTNPROF_SETUP_TESTS=1): Chromium renders the HTML
# reports headless (tests/ci/html_chromium.sh), git makes the repositories the gate tests use,
# PostgreSQL's server is the fleet server attnprof push and pull are tested against
# (tests/ci/postgres.sh starts a cluster of its own; the package's own cluster is not used).
if [ "${ATTNPROF_SETUP_TESTS:-0}" = 1 ]; then
  pkgs+=(chromium git postgresql)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  say "installing Debian packages: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
else
  say "Debian packages: all ${#pkgs[@]} present"
fi

# --- LibTorch: the user's torch, or the pinned PyPI torch wheel ----------------------------
[ -z "${ATTNPROF_TORCH_NOTE:-}" ] || say "$ATTNPROF_TORCH_NOTE"
if [ -n "${ATTNPROF_TORCH_ERROR:-}" ]; then
  say "error: $ATTNPROF_TORCH_ERROR"
  exit 2
fi
if [ "$ATTNPROF_TORCH_SOURCE" != "pinned venv" ]; then
  say "torch $ATTNPROF_TORCH_VERSION ($ATTNPROF_TORCH_SOURCE: $ATTNPROF_TORCH_PYTHON): the" \
      "pinned venv is not used"
else
  torch_pin="$(cat "$here/torch-version.txt")"
  have=""
  if [ -x "$ATTNPROF_VENV/bin/python" ]; then
    # numpy too: without it torch warns "Failed to initialize NumPy" at every CMake configure.
    have="$("$ATTNPROF_VENV/bin/python" -c \
            'import numpy, torch; print(torch.__version__.split("+")[0])' 2>/dev/null || true)"
  fi
  if [ "$have" = "$torch_pin" ]; then
    say "torch $have and numpy: present in $ATTNPROF_VENV"
  else
    # The python the venv is made from (any the torch wheel supports).
    py="${ATTNPROF_VENV_PYTHON:-python3}"
    say "installing torch==$torch_pin into $ATTNPROF_VENV (a few GB: the wheel and its CUDA" \
        "libraries)"
    mkdir -p "$ATTNPROF_HOME"
    # One install at a time: two first builds started together (parallel worktrees, a CI job's
    # steps) would both write torch into one venv, and a torch whose files one pip rewrote while
    # the other imported them fails with a bus error. The second waits, then finds the first's
    # install (pip's "already satisfied"). Only pip holds the lock, never a process left behind.
    (
      flock 9
      [ -x "$ATTNPROF_VENV/bin/python" ] || "$py" -m venv "$ATTNPROF_VENV"
      "$ATTNPROF_VENV/bin/python" -m pip install -q --upgrade pip
      # --no-cache-dir: the venv is the cache; pip's own copy of the wheels would add 4 GB of
      # disk writes to a first run and keep them.
      "$ATTNPROF_VENV/bin/python" -m pip install -q --no-cache-dir "torch==$torch_pin" numpy
    ) 9>"$ATTNPROF_HOME/setup.lock"
    # ci/env.sh again, now that the venv's torch is there to be read.
    # shellcheck source=ci/env.sh
    source "$here/env.sh"
  fi
fi

# --- transformers, for the tests of hf: kernels (configs only: no weights, no model hub) ---
# Only into the pinned venv, and only for the tests: a user's own torch environment is theirs
# (hf: kernels skip, saying how to install it, where it lacks transformers).
if [ "${ATTNPROF_SETUP_TESTS:-0}" = 1 ] && [ "$ATTNPROF_TORCH_SOURCE" = "pinned venv" ]; then
  tf_pin="$(cat "$here/transformers-version.txt")"
  tf_have="$("$ATTNPROF_VENV/bin/python" -c \
             'import importlib.metadata as m; print(m.version("transformers"))' 2>/dev/null || true)"
  if [ "$tf_have" = "$tf_pin" ]; then
    say "transformers $tf_have: present in $ATTNPROF_VENV"
  else
    say "installing transformers==$tf_pin into $ATTNPROF_VENV (the hf: kernels' tests)"
    (
      flock 9
      "$ATTNPROF_VENV/bin/python" -m pip install -q --no-cache-dir "transformers==$tf_pin"
    ) 9>"$ATTNPROF_HOME/setup.lock"
  fi
fi

# --- The CUDA toolkit ------------------------------------------------------------------------
# ci/env.sh picked one already if there is one (the caller's CUDAToolkit_ROOT, a system toolkit
# of the wheel's major, or the venv's); otherwise NVIDIA's compiler wheels (ci/cuda-wheels.txt,
# which says why those exact versions) complete the venv's nvidia/cu<major> folder, where the
# torch wheel put the runtime, CUPTI and NVTX, into a toolkit.
if [[ "${ATTNPROF_CMAKE_ARGS:-}" == *ATTNPROF_CUDA=OFF* ]]; then
  say "CUDA toolkit: not needed (ATTNPROF_CUDA=OFF)"
elif [ -n "$ATTNPROF_TORCH_PACKAGE" ] && [ -z "$ATTNPROF_TORCH_CUDA" ]; then
  say "CUDA toolkit: not needed (torch $ATTNPROF_TORCH_VERSION is a CPU build: attnprof builds" \
      "without CUDA)"
elif [ -n "${CUDAToolkit_ROOT:-}" ] && [ "$CUDAToolkit_ROOT" != "$(attnprof_cuda_venv)" ]; then
  say "CUDA toolkit: $CUDAToolkit_ROOT (system)"
elif [ "$ATTNPROF_TORCH_SOURCE" != "pinned venv" ]; then
  say "error: no CUDA $ATTNPROF_CUDA_MAJOR toolkit on this machine for torch" \
      "$ATTNPROF_TORCH_VERSION (built for CUDA $ATTNPROF_TORCH_CUDA): install one and name it" \
      "with CUDAToolkit_ROOT=..., or build without CUDA (ATTNPROF_CMAKE_ARGS=-DATTNPROF_CUDA=OFF)"
  exit 3
else
  root="$(attnprof_cuda_venv)"
  # Checked against the pins every time, offline, so that a changed pin reaches a venv that
  # already has the toolkit.
  missing="$("$ATTNPROF_VENV/bin/python" - "$here/cuda-wheels.txt" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, pin = line.split("==")
    try:
        ok = version(name) == pin
    except PackageNotFoundError:
        ok = False
    if not ok:
        print(line, end=" ")
PY
)"
  if [ -n "$missing" ]; then
    say "no CUDA $ATTNPROF_CUDA_MAJOR toolkit on this machine: installing NVIDIA's compiler" \
        "wheels ${missing% }(ci/cuda-wheels.txt) into $ATTNPROF_VENV"
    "$ATTNPROF_VENV/bin/python" -m pip install -q --no-cache-dir -r "$here/cuda-wheels.txt"
  fi
  if ! attnprof_cuda_usable "$root"; then
    say "error: $root is no usable CUDA $ATTNPROF_CUDA_MAJOR toolkit after installing" \
        "ci/cuda-wheels.txt (want bin/nvcc of release $ATTNPROF_CUDA_MAJOR and include/cupti.h)"
    exit 3
  fi
  # The wheels lay the toolkit out as a runtime, not for building: nvcc.profile links from
  # lib64/ (the wheels have lib/), and the libraries carry only their versioned names, which
  # the linker (-lcudart) and CMake's FindCUDAToolkit do not look for. The links a toolkit's
  # development packages would add; each run re-checks them (cheap, and repairs an
  # interrupted one).
  [ -e "$root/lib64" ] || ln -s lib "$root/lib64"
  for lib in "$root"/lib/lib*.so.*; do
    dev="${lib%.so.*}.so"
    [ -e "$dev" ] || ln -s "$(basename "$lib")" "$dev"
  done
  say "CUDA toolkit: $root (pip wheels in the venv)"
fi

# --- Apache Otava (tests only) -----------------------------------------------------------------
# tests/ci/exports.sh feeds `attnprof export --format otava` to Otava itself and checks that its
# change points agree with `attnprof changes`. A venv of its own, ATTNPROF_HOME/otava: Otava
# pins numpy and scipy versions of its own, which must not move the torch venv's. Pinned, so
# that the test's figures do not move with a release. Without PyPI the install fails, setup goes
# on, and the test is skipped saying why; the next setup tries again (the half venv is removed).
if [ "${ATTNPROF_SETUP_TESTS:-0}" = 1 ]; then
  otava_pin=0.8.0
  otava_venv="$ATTNPROF_HOME/otava"
  otava_ok() {
    "$otava_venv/bin/python" -c 'import sys; from importlib.metadata import version
sys.exit(version("apache-otava") != sys.argv[1])' "$otava_pin" 2>/dev/null
  }
  if otava_ok; then
    say "Apache Otava $otava_pin: present in $otava_venv"
  else
    say "installing apache-otava==$otava_pin into $otava_venv (tests/ci/exports.sh runs it)"
    mkdir -p "$ATTNPROF_HOME"
    # The torch venv's lock: a second setup waits, then finds the first one's install.
    if ! (
      flock 9
      otava_ok && exit 0
      rm -rf "$otava_venv"
      python3 -m venv "$otava_venv"
      "$otava_venv/bin/python" -m pip install -q --no-cache-dir "apache-otava==$otava_pin"
    ) 9>"$ATTNPROF_HOME/setup.lock"; then
      rm -rf "$otava_venv"
      say "could not install apache-otava==$otava_pin (is PyPI reachable?): tests/ci/exports.sh" \
          "will skip its Otava part"
    fi
  fi
fi

say "done in $(( $(date +%s) - t0 )) s; torch $ATTNPROF_TORCH_VERSION" \
    "($ATTNPROF_TORCH_SOURCE): $ATTNPROF_TORCH_PACKAGE"
