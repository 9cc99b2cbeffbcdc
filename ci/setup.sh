#!/usr/bin/env bash
# Installs everything attnprof needs to build and test, on a fresh Debian 12 machine or an
# Ubuntu GPU runner. Idempotent: each step checks first and says what it did or skipped.
#
# Where things go (outside the checkout, so a fresh clone reuses them):
#   ATTNPROF_HOME (default ~/.cache/attnprof)/venv   Python venv with the pinned torch wheel,
#                                                     whose CMake package is our LibTorch.
# Prints, as its last line, nothing; callers source ci/env.sh to get the paths.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=ci/env.sh
source "$here/env.sh"

say() { printf 'setup: %s\n' "$*"; }
t0=$(date +%s)

# --- Debian/Ubuntu packages -------------------------------------------------------------
# yaml-cpp, doctest, CLI11, nlohmann-json, fmt and SQLite come from the distribution: they
# are well kept there and need no vendoring.
pkgs=(build-essential cmake ninja-build ccache pkg-config python3-venv
      libyaml-cpp-dev doctest-dev libcli11-dev nlohmann-json3-dev libfmt-dev
      libsqlite3-dev sqlite3)
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

# --- LibTorch from the pinned PyPI torch wheel --------------------------------------------
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
  py="${ATTNPROF_PYTHON:-python3}"
  say "installing torch==$torch_pin into $ATTNPROF_VENV (a few GB: the wheel and its CUDA libraries)"
  mkdir -p "$ATTNPROF_HOME"
  [ -x "$ATTNPROF_VENV/bin/python" ] || "$py" -m venv "$ATTNPROF_VENV"
  "$ATTNPROF_VENV/bin/python" -m pip install -q --upgrade pip
  "$ATTNPROF_VENV/bin/python" -m pip install -q "torch==$torch_pin" numpy
fi

say "done in $(( $(date +%s) - t0 )) s; torch CMake prefix: $("$ATTNPROF_VENV/bin/python" -c \
  'import torch.utils; print(torch.utils.cmake_prefix_path)')"
