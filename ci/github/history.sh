#!/usr/bin/env bash
# Durable history on a git branch: main's runs as `attnprof export` JSON lines, one file per
# recorded job, so the history outlives any cache. Only trusted pushes to main write it (the
# record job, with `contents: write`); every job may read it.
#
#   history.sh fetch DB            import every export on the branch into DB (created if absent)
#   history.sh push FILE PATH      add FILE to the branch as PATH (e.g. history/smoke/<id>.jsonl)
#
# Environment: ATTNPROF_HISTORY_BRANCH (default attnprof-history), ATTNPROF_HISTORY_REMOTE
# (default origin), ATTNPROF_BIN (the attnprof executable; default build/attnprof).
# The branch is written with git plumbing (a private index, commit-tree, push), never a
# checkout, so the job's working tree is untouched. Files have unique names, so two jobs
# pushing at once never conflict: a rejected push refetches and retries.
set -euo pipefail
branch="${ATTNPROF_HISTORY_BRANCH:-attnprof-history}"
remote="${ATTNPROF_HISTORY_REMOTE:-origin}"
attnprof="${ATTNPROF_BIN:-build/attnprof}"
ref="refs/attnprof/history"  # a private local ref for what was fetched

fetch_branch() {
  # A missing branch is not an error: the first recording job creates it.
  if git fetch --quiet --no-tags "$remote" "+refs/heads/$branch:$ref" 2>/dev/null; then
    return 0
  fi
  git update-ref -d "$ref" 2>/dev/null || true
  return 1
}

cmd_fetch() {
  local db="$1"
  if ! fetch_branch; then
    echo "history: no branch $branch on $remote yet; starting from an empty history"
    return 0
  fi
  local dir
  dir="$(mktemp -d)"
  git archive --format=tar "$ref" | tar -x -C "$dir"
  mapfile -t files < <(find "$dir" -name '*.jsonl' | sort)
  if [ "${#files[@]}" -eq 0 ]; then
    echo "history: $branch holds no exports yet"
  else
    echo "history: importing ${#files[@]} export(s) from $branch"
    "$attnprof" import --db "$db" "${files[@]}" | tail -n 1
  fi
  rm -rf "$dir"
}

cmd_push() {
  local file="$1" path="$2"
  case "$path" in
    /* | *..*) echo "history: bad path \"$path\" (relative, no ..)" >&2; exit 2 ;;
  esac
  local blob
  blob="$(git hash-object -w "$file")"
  for attempt in 1 2 3 4 5; do
    local parent="" index
    index="$(mktemp)"
    rm -f "$index"
    if fetch_branch; then
      parent="$(git rev-parse "$ref")"
      GIT_INDEX_FILE="$index" git read-tree "$parent"
    else
      GIT_INDEX_FILE="$index" git read-tree --empty
    fi
    GIT_INDEX_FILE="$index" git update-index --add --cacheinfo "100644,$blob,$path"
    local tree commit
    tree="$(GIT_INDEX_FILE="$index" git write-tree)"
    rm -f "$index"
    local message="attnprof history: $path"
    [ -n "${GITHUB_SHA:-}" ] && message+=" (from ${GITHUB_SHA:0:12})"
    # The job's own identity when git has none configured (a fresh runner).
    commit="$(GIT_AUTHOR_NAME="${GIT_AUTHOR_NAME:-attnprof}" \
      GIT_AUTHOR_EMAIL="${GIT_AUTHOR_EMAIL:-attnprof@users.noreply.github.com}" \
      GIT_COMMITTER_NAME="${GIT_COMMITTER_NAME:-attnprof}" \
      GIT_COMMITTER_EMAIL="${GIT_COMMITTER_EMAIL:-attnprof@users.noreply.github.com}" \
      git commit-tree "$tree" ${parent:+-p "$parent"} -m "$message")"
    if git push --quiet "$remote" "$commit:refs/heads/$branch"; then
      echo "history: added $path to $branch"
      return 0
    fi
    echo "history: push rejected (attempt $attempt; another job pushed first), retrying" >&2
    sleep $((attempt * 2))
  done
  echo "history: could not push to $branch after 5 attempts" >&2
  exit 3
}

case "${1:-}" in
  fetch) [ $# -eq 2 ] || { echo "usage: history.sh fetch DB" >&2; exit 2; }; cmd_fetch "$2" ;;
  push) [ $# -eq 3 ] || { echo "usage: history.sh push FILE PATH" >&2; exit 2; }; cmd_push "$2" "$3" ;;
  *) echo "usage: history.sh fetch DB | push FILE PATH" >&2; exit 2 ;;
esac
