# Sourced by gate.sh: building the two sides of a pull-request gate and telling them apart.
#
# A side is an attnprof build (attnprof and attnprof-worker) plus, in a repository of its own,
# what the user's build command made in that side's tree (plugins, AOTInductor packages).
# Functions here report errors as `gate: ...` on stderr and return the gate's exit code
# (2: an input is wrong, 3: the environment failed); the caller finishes with it.

# attnprof_tool_build SIDE TORCH_SPEC BUILD_DIR: builds attnprof from its own files (this
# action's tree, never the caller's checkout) into BUILD_DIR. TORCH_SPEC (a pip specifier such
# as torch==2.10.0, or empty for the default torch) selects a venv of its own for that torch.
attnprof_tool_build() {
  local side="$1" spec="$2" dir="$3" py_env=()
  if [ -n "$spec" ]; then
    local venv
    venv="$ATTNPROF_HOME/torch-$(printf '%s' "$spec" | sha256sum | cut -c1-12)"
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
      echo "gate: $side-torch: installing $spec into $venv"
      { python3 -m venv "$venv" &&
        "$venv/bin/python" -m pip install -q --no-cache-dir "$spec" numpy; } >&2 || {
        echo "gate: $side-torch: pip could not install \"$spec\" (a pip specifier such as" \
             "torch==2.10.0)" >&2
        return 2
      }
    fi
    py_env=(ATTNPROF_PYTHON="$venv/bin/python")
  fi
  echo "::group::build attnprof for the $side side${spec:+ ($spec)}"
  if ! env "${py_env[@]}" ATTNPROF_BUILD="$dir" \
       bash "$attnprof_src/ci/build.sh" attnprof attnprof-worker; then
    echo "::endgroup::"
    echo "gate: attnprof itself did not build for the $side side (from $attnprof_src)" >&2
    return 3
  fi
  echo "::endgroup::"
}

# side_torch_dir ATTNPROF: the LibTorch CMake folder that build's worker links (attnprof env).
side_torch_dir() {
  "$1" env 2>/dev/null | sed -n 's/^Torch_DIR: *\([^ ]*\).*/\1/p' | head -n 1
}

# user_build SIDE TREE ATTNPROF: runs the build command, then the packages command, in TREE,
# with that side's LibTorch on CMAKE_PREFIX_PATH (Torch_DIR exported), its Python first on PATH
# and the CUDA toolkit's variables, so `cmake -S . -B build && cmake --build build` finds both.
# The tree's own path is mapped away in what the compilers write (-ffile-prefix-map), so that
# the same code built in two trees is the same bytes and a comment-only change is seen as one.
user_build() {
  local side="$1" tree="$2" attnprof="$3" torch_dir prefix venv cmd what
  torch_dir="$(side_torch_dir "$attnprof")"
  if [ -z "$torch_dir" ]; then
    echo "gate: $attnprof env names no Torch_DIR: this attnprof has no worker" >&2
    return 3
  fi
  prefix="$(cd "$torch_dir/.." && pwd)"   # <site-packages>/torch/share/cmake
  venv="$(cd "$torch_dir/../../../../../../.." && pwd)"
  local map="-ffile-prefix-map=$tree=."
  for what in build packages; do
    if [ "$what" = build ]; then cmd="${ATTNPROF_BUILD_COMMAND:-}"; else
      cmd="${ATTNPROF_PACKAGES_COMMAND:-}"; fi
    [ -n "$cmd" ] || continue
    echo "::group::$what-command in the $side tree ($tree)"
    local rc=0
    local launcher=()
    # ccache, when there is one, for the user's build too (the action caches its folder).
    if command -v ccache >/dev/null && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
      launcher=(CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
                CMAKE_CUDA_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$tree")
    fi
    (cd "$tree" &&
      env "${launcher[@]}" CMAKE_PREFIX_PATH="$prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}" \
          Torch_DIR="$torch_dir" PATH="$venv/bin:$PATH" \
          CFLAGS="$map ${CFLAGS:-}" CXXFLAGS="$map ${CXXFLAGS:-}" \
          CUDAFLAGS="-Xcompiler=$map ${CUDAFLAGS:-}" \
          bash -euo pipefail -c "$cmd") || rc=$?
    echo "::endgroup::"
    if [ "$rc" -ne 0 ]; then
      echo "gate: $what-command failed in the $side tree ($tree) with exit $rc: $cmd" >&2
      return 2
    fi
  done
}

# side_plugins SIDE TREE: prints --plugin=PATH for each of ATTNPROF_PLUGINS in TREE; fails
# (exit 2) naming the first one the build did not make.
side_plugins() {
  local side="$1" tree="$2" p
  local -a plugins
  read -r -a plugins <<<"${ATTNPROF_PLUGINS:-}"
  for p in "${plugins[@]}"; do
    if [ ! -f "$tree/$p" ]; then
      echo "gate: plugins: $p is not in the $side tree ($tree) after build-command;" \
           "give paths relative to the repository root, as the build makes them" >&2
      return 2
    fi
    printf -- '--plugin=%s\n' "$tree/$p"
  done
}

# tree_substitutes KIND SUITES_JSON HEAD_TREE BASE_TREE: for each compiled package (KIND aoti:
# aoti:PATH) or Python module (KIND py: py:PATH.py:NAME, with or without @MODE) the head's suites
# name inside HEAD_TREE, a worker argument that makes the base side run the same file of
# BASE_TREE under the case's name (--substitute), so that a change to the file is what the
# verdict is about. Reads `attnprof list --json`.
tree_substitutes() {
  python3 - "$@" <<'PY'
import json, os, sys
kind, cases, head, base = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
seen = set()
for c in cases:
    k = c["kernel"]
    if not k.startswith(kind + ":") or k in seen:
        continue
    seen.add(k)
    path, suffix = k[len(kind) + 1:], ""
    if kind == "py":  # PATH.py:NAME[@MODE]: the name (and mode) stay as they are
        at = path.rfind("@")
        if at >= 0 and not any(ch in path[at:] for ch in ":/"):
            path, suffix = path[:at], path[at:]
        path, name = path.rsplit(":", 1)
        suffix = ":" + name + suffix
    if not os.path.isabs(path):
        path = os.path.join(os.path.dirname(os.path.abspath(c["loc"]["file"])), path)
    rel = os.path.relpath(os.path.normpath(path), head)
    if not rel.startswith(".."):
        print(f"--substitute={k}={kind}:{os.path.join(base, rel)}{suffix}")
PY
}

# same_code A B: whether two built files hold the same code. Shared objects and executables are
# compared without their debug sections and build id (the tree's path lives there); packages
# (.pt2, zip archives) by their members' names and contents, not their timestamps.
same_code() {
  python3 - "$1" "$2" <<'PY'
import os, shutil, subprocess, sys, tempfile, zipfile
a, b = sys.argv[1], sys.argv[2]
if zipfile.is_zipfile(a) and zipfile.is_zipfile(b):
    def members(p):
        with zipfile.ZipFile(p) as z:
            return sorted((i.filename, i.CRC, i.file_size) for i in z.infolist())
    sys.exit(0 if members(a) == members(b) else 1)
def code(p, d):
    out = os.path.join(d, os.path.basename(p) + str(len(os.listdir(d))))
    if shutil.which("objcopy") and subprocess.run(
            ["objcopy", "--strip-debug", "--remove-section=.note.gnu.build-id", p, out],
            capture_output=True).returncode == 0:
        return open(out, "rb").read()
    return open(p, "rb").read()
with tempfile.TemporaryDirectory() as d:
    sys.exit(0 if code(a, d) == code(b, d) else 1)
PY
}
